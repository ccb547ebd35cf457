"""Strict checking of untrusted jobspecs at the scheduler's boundary.

A jobspec reaches ``sched.alloc`` and ``feasibility.check`` as untrusted
input.  flux-python 0.88's request parser is lenient: it reads neither
``version`` nor ``tasks``, takes a count it does not understand (2.5,
``true``, a list, ``null``) as 1, skips resource types it does not know
and passes the duration through ``float()``.  A scheduler that relies on
it can allocate something the user never asked for.  :func:`jobspec_problem`
checks a jobspec against RFC 14 in its version 1 form (RFC 25) first, so a
malformed one is denied with a note that names what is wrong.

What version 1 allows, and what is checked here:

- a JSON object with ``version`` (the integer 1), ``resources``, ``tasks``
  and ``attributes``;
- ``resources``: a non-empty list of vertices ``{type, count, with?,
  label?, exclusive?, unit?}``, types ``node``, ``slot``, ``core`` and
  ``gpu`` only, nested ``node`` -> ``slot`` -> ``core``/``gpu`` (the node
  level optional), a ``slot`` with a ``label`` and a ``with`` holding at
  least one ``core``;
- ``count``: an integer >= 1 (never a boolean), or a range ``{min, max?,
  operator?, operand?}`` with integer ``min`` >= 1, ``max`` >= ``min``,
  operator ``+``, ``*`` or ``^`` and a positive integer operand (at least
  2 for ``*`` and ``^``);
- ``tasks``: a non-empty list of objects, each with a ``command`` list and
  a ``count`` object;
- ``attributes.system.duration``, if present: a number >= 0 (not a boolean,
  not a string).
"""

from __future__ import annotations

import math

#: Resource types of a version 1 jobspec, and what each may contain.
_CHILDREN = {"node": ("slot",), "slot": ("core", "gpu"), "core": (), "gpu": ()}
_TOP = ("node", "slot")
_VERTEX_KEYS = {"type", "count", "with", "label", "exclusive", "unit", "id"}
_OPERATORS = ("+", "*", "^")


def jobspec_problem(jobspec) -> str | None:
    """What makes *jobspec* invalid as an RFC 14 version 1 jobspec, in one
    sentence, or None if it is valid."""
    if not isinstance(jobspec, dict):
        return f"jobspec must be an object, not {_kind(jobspec)}"
    for key in ("version", "resources", "tasks", "attributes"):
        if key not in jobspec:
            return f"jobspec has no {key!r}"
    version = jobspec["version"]
    if version != 1 or isinstance(version, bool) or not isinstance(version, int):
        return f"jobspec version must be the integer 1, not {version!r}"
    resources = jobspec["resources"]
    if not isinstance(resources, list) or not resources:
        return "resources must be a non-empty list"
    for vertex in resources:
        problem = _vertex_problem(vertex, _TOP, "resources")
        if problem:
            return problem
    problem = _tasks_problem(jobspec["tasks"])
    if problem:
        return problem
    return _attributes_problem(jobspec["attributes"])


def _vertex_problem(vertex, allowed: tuple[str, ...], where: str) -> str | None:
    if not isinstance(vertex, dict):
        return f"{where}: a resource must be an object, not {_kind(vertex)}"
    rtype = vertex.get("type")
    if not isinstance(rtype, str):
        return f"{where}: resource type must be a string, not {_kind(rtype)}"
    if rtype not in _CHILDREN:
        return f"{where}: unknown resource type {rtype!r}"
    if rtype not in allowed:
        expected = " or ".join(allowed) if allowed else "nothing"
        return f"{where}: {rtype!r} is not allowed here (expected {expected})"
    unknown = set(vertex) - _VERTEX_KEYS
    if unknown:
        return f"{where}.{rtype}: unknown key {sorted(unknown)[0]!r}"
    if "count" not in vertex:
        return f"{where}.{rtype}: no count"
    problem = _count_problem(vertex["count"])
    if problem:
        return f"{where}.{rtype}: count {problem}"
    if "exclusive" in vertex and not isinstance(vertex["exclusive"], bool):
        return f"{where}.{rtype}: exclusive must be true or false"
    children = vertex.get("with", [])
    if not isinstance(children, list):
        return f"{where}.{rtype}: 'with' must be a list"
    if rtype == "slot":
        if not isinstance(vertex.get("label"), str) or not vertex["label"]:
            return f"{where}.slot: a slot needs a label"
        if not any(isinstance(c, dict) and c.get("type") == "core" for c in children):
            return f"{where}.slot: a slot must contain cores"
    elif _CHILDREN[rtype] and not children:
        return f"{where}.{rtype}: a {rtype} must contain a slot"
    for child in children:
        problem = _vertex_problem(child, _CHILDREN[rtype], f"{where}.{rtype}")
        if problem:
            return problem
    return None


def _count_problem(count) -> str | None:
    if _positive_int(count):
        return None
    if not isinstance(count, dict):
        return f"must be an integer >= 1 or a range, not {count!r}"
    unknown = set(count) - {"min", "max", "operator", "operand"}
    if unknown:
        return f"range has unknown key {sorted(unknown)[0]!r}"
    low = count.get("min")
    if not _positive_int(low):
        return f"range min must be an integer >= 1, not {low!r}"
    high = count.get("max", low)
    if not _positive_int(high) or high < low:
        return f"range max must be an integer >= min, not {high!r}"
    operator = count.get("operator", "+")
    operand = count.get("operand", 1)
    if operator not in _OPERATORS:
        return f"range operator must be one of + * ^, not {operator!r}"
    least = 1 if operator == "+" else 2
    if not _positive_int(operand) or operand < least:
        return f"range operand for {operator!r} must be an integer >= {least}"
    return None


def _tasks_problem(tasks) -> str | None:
    if not isinstance(tasks, list) or not tasks:
        return "tasks must be a non-empty list"
    for task in tasks:
        if not isinstance(task, dict):
            return f"a task must be an object, not {_kind(task)}"
        if not isinstance(task.get("command"), list):
            return "a task needs a command list"
        if not isinstance(task.get("count"), dict):
            return "a task needs a count object"
    return None


def _attributes_problem(attributes) -> str | None:
    if not isinstance(attributes, dict):
        return f"attributes must be an object, not {_kind(attributes)}"
    system = attributes.get("system", {})
    if not isinstance(system, dict):
        return f"attributes.system must be an object, not {_kind(system)}"
    if "duration" in system:
        duration = system["duration"]
        if (
            isinstance(duration, bool)
            or not isinstance(duration, (int, float))
            or not 0 <= duration < math.inf
        ):
            return f"duration must be a number of seconds >= 0, not {duration!r}"
    return None


def _positive_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _kind(value) -> str:
    return "null" if value is None else type(value).__name__


__all__ = ["jobspec_problem"]
