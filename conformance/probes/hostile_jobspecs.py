"""The hostile jobspecs of ``robust.hostile-jobspecs``, one per malformation.

Each :class:`HostileCase` is a jobspec a scheduler may receive in
``sched.alloc`` when nothing upstream validated it (no ingest validator, a
buggy submission tool, a hand-made request).  They are built from one
valid V1 jobspec (RFC 14 / RFC 25: one slot of one core, 60 s) with one
thing broken, so each names the single malformation it tests.

Every case here is invalid jobspec version 1, or valid but impossible on
the probe's machine (huge counts, resource types it does not have): a
conforming scheduler denies each with a note.  The JSON payloads are kept
within what a broker can carry (no NaN or infinity, nesting well under
the 1,000 levels of a JSON encoder's recursion guard).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from mock_broker.jobspec import make_jobspec

#: Nesting depth of the deep-nesting cases (resource levels; each adds a
#: dict and a list to the JSON).
DEEP_LEVELS = 300

#: 10**18: a count no machine has, still an exact JSON integer.
HUGE = 10**18


@dataclass(frozen=True)
class HostileCase:
    """One malformed jobspec.

    Attributes:
        name: short stable id (used in evidence and statistics).
        group: the family of malformation (missing-key, wrong-type, count,
            range, nesting, unknown-type, not-a-dict, duration).
        what: one line saying what is wrong with it.
        jobspec: the jobspec itself (any JSON value).
    """

    name: str
    group: str
    what: str
    jobspec: object

    def summary(self, limit: int = 160) -> str:
        """``name`` and the jobspec as short JSON text, for evidence."""
        text = json.dumps(self.jobspec, separators=(",", ":"))
        if len(text) > limit:
            text = text[: limit - 3] + "..."
        return f"{self.name} ({self.what}): {text}"


def base() -> dict:
    """The valid jobspec every case breaks: one slot of one core, 60 s."""
    return make_jobspec(slots=1, cores=1, duration=60.0)


def _node_based() -> dict:
    return make_jobspec(nodes=1, slots=1, cores=1, duration=60.0)


def _with(edit) -> dict:
    spec = base()
    edit(spec)
    return spec


def _node_with(edit) -> dict:
    spec = _node_based()
    edit(spec)
    return spec


def _slot(spec: dict) -> dict:
    return spec["resources"][0]


def _core(spec: dict) -> dict:
    return spec["resources"][0]["with"][0]


def _node(spec: dict) -> dict:
    return spec["resources"][0]


def _set_core_count(value):
    def edit(spec):
        _core(spec)["count"] = value

    return edit


def _set_node_count(value):
    def edit(spec):
        _node(spec)["count"] = value

    return edit


def _set_system(value):
    def edit(spec):
        spec["attributes"]["system"] = value

    return edit


def _set_duration(value):
    def edit(spec):
        spec["attributes"]["system"]["duration"] = value

    return edit


def _pop(*path):
    def edit(spec):
        target = spec
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]

    return edit


def _set(key, value):
    def edit(spec):
        spec[key] = value

    return edit


def _deep_unknown(levels: int) -> dict:
    """A slot under *levels* vertices of a type nobody knows."""
    spec = base()
    vertex = spec["resources"][0]
    for i in range(levels):
        vertex = {"type": f"level{i % 7}", "count": 1, "with": [vertex]}
    spec["resources"] = [vertex]
    return spec


def _deep_slots(levels: int) -> dict:
    """Slots nested *levels* deep, the core at the bottom."""
    spec = base()
    vertex = {"type": "core", "count": 1}
    for _ in range(levels):
        vertex = {"type": "slot", "count": 1, "label": "task", "with": [vertex]}
    spec["resources"] = [vertex]
    return spec


def _cases() -> list[HostileCase]:
    c = HostileCase
    out = [
        # -- not a dict at all --------------------------------------------------
        c("not-a-dict-string", "not-a-dict", "a string", "slot=1 core=1"),
        c("not-a-dict-list", "not-a-dict", "a list", [base()]),
        c("not-a-dict-null", "not-a-dict", "null", None),
        c("not-a-dict-number", "not-a-dict", "a number", 42),
        c("empty-dict", "missing-key", "an empty object", {}),
        # -- missing keys -------------------------------------------------------
        c("no-resources", "missing-key", "no resources", _with(_pop("resources"))),
        c(
            "empty-resources",
            "missing-key",
            "resources []",
            _with(_set("resources", [])),
        ),
        c("no-tasks", "missing-key", "no tasks", _with(_pop("tasks"))),
        c("no-version", "missing-key", "no version", _with(_pop("version"))),
        c("no-attributes", "missing-key", "no attributes", _with(_pop("attributes"))),
        c(
            "no-system",
            "missing-key",
            "attributes without system",
            _with(_set("attributes", {})),
        ),
        c(
            "no-duration",
            "missing-key",
            "attributes.system without duration",
            _with(_pop("attributes", "system", "duration")),
        ),
        c(
            "no-type",
            "missing-key",
            "a resource vertex without type",
            _with(lambda s: _core(s).pop("type")),
        ),
        c(
            "no-count",
            "missing-key",
            "a resource vertex without count",
            _with(lambda s: _core(s).pop("count")),
        ),
        c(
            "slot-without-with",
            "missing-key",
            "a slot with no children",
            _with(lambda s: _slot(s).pop("with")),
        ),
        # -- wrong types --------------------------------------------------------
        c("version-string", "wrong-type", 'version "1"', _with(_set("version", "1"))),
        c(
            "resources-dict",
            "wrong-type",
            "resources an object, not a list",
            _with(lambda s: s.update(resources=s["resources"][0])),
        ),
        c(
            "resources-string",
            "wrong-type",
            "resources a string",
            _with(_set("resources", "slot")),
        ),
        c(
            "vertex-list",
            "wrong-type",
            "a resource vertex that is a list",
            _with(lambda s: s.update(resources=[s["resources"]])),
        ),
        c(
            "with-dict",
            "wrong-type",
            "with an object, not a list",
            _with(lambda s: _slot(s).update({"with": _core(s)})),
        ),
        c(
            "type-number",
            "wrong-type",
            "resource type 7",
            _with(lambda s: _core(s).update(type=7)),
        ),
        c(
            "tasks-dict",
            "wrong-type",
            "tasks an object, not a list",
            _with(lambda s: s.update(tasks=s["tasks"][0])),
        ),
        c(
            "attributes-list",
            "wrong-type",
            "attributes a list",
            _with(_set("attributes", [{"system": {"duration": 60.0}}])),
        ),
        c(
            "system-string",
            "wrong-type",
            "attributes.system a string",
            _with(_set_system("duration=60")),
        ),
        c("count-word", "wrong-type", 'count "four"', _with(_set_core_count("four"))),
        c("count-float", "wrong-type", "count 2.5", _with(_set_core_count(2.5))),
        c("count-null", "wrong-type", "count null", _with(_set_core_count(None))),
        c("count-bool", "wrong-type", "count true", _with(_set_core_count(True))),
        c(
            "count-list",
            "wrong-type",
            "count a list, not a range object",
            _node_with(_set_node_count([1, 2])),
        ),
        # -- zero, negative, huge counts ------------------------------------------
        c("core-count-0", "count", "0 cores", _with(_set_core_count(0))),
        c(
            "slot-count-0",
            "count",
            "0 slots",
            _with(lambda s: _slot(s).update(count=0)),
        ),
        c("node-count-0", "count", "0 nodes", _node_with(_set_node_count(0))),
        c("core-count-negative", "count", "-1 cores", _with(_set_core_count(-1))),
        c("node-count-negative", "count", "-2 nodes", _node_with(_set_node_count(-2))),
        c("core-count-huge", "count", "10**18 cores", _with(_set_core_count(HUGE))),
        c(
            "slot-count-huge",
            "count",
            "10**18 slots",
            _with(lambda s: _slot(s).update(count=HUGE)),
        ),
        c(
            "node-count-huge",
            "count",
            "10**18 nodes",
            _node_with(_set_node_count(HUGE)),
        ),
        c(
            "gpu-count-huge",
            "count",
            "10**18 gpus per slot",
            _with(lambda s: _slot(s)["with"].append({"type": "gpu", "count": HUGE})),
        ),
        # -- range counts ---------------------------------------------------------
        c(
            "range-min-above-max",
            "range",
            "min 4 > max 2",
            _node_with(_set_node_count({"min": 4, "max": 2})),
        ),
        c(
            "range-min-0",
            "range",
            "min 0",
            _node_with(_set_node_count({"min": 0, "max": 2})),
        ),
        c(
            "range-min-negative",
            "range",
            "min -3",
            _node_with(_set_node_count({"min": -3})),
        ),
        c(
            "range-bad-operator",
            "range",
            'operator "%"',
            _node_with(
                _set_node_count({"min": 1, "max": 4, "operator": "%", "operand": 2})
            ),
        ),
        c(
            "range-operand-0",
            "range",
            'operator "+" operand 0',
            _node_with(
                _set_node_count({"min": 1, "max": 4, "operator": "+", "operand": 0})
            ),
        ),
        c(
            "range-times-operand-1",
            "range",
            'operator "*" operand 1',
            _node_with(
                _set_node_count({"min": 1, "max": 4, "operator": "*", "operand": 1})
            ),
        ),
        c(
            "range-min-string",
            "range",
            'min "a"',
            _node_with(_set_node_count({"min": "a", "max": 2})),
        ),
        c(
            "range-unbounded-stepped",
            "range",
            "no max with operator *",
            _node_with(_set_node_count({"min": 2, "operator": "*", "operand": 2})),
        ),
        c(
            "range-huge-min",
            "range",
            "min 10**18",
            _node_with(_set_node_count({"min": HUGE, "max": HUGE + 1})),
        ),
        c(
            "range-string-reversed",
            "range",
            'count "4-2"',
            _node_with(_set_node_count("4-2")),
        ),
        # -- deep nesting ---------------------------------------------------------
        c(
            "deep-unknown",
            "nesting",
            f"a slot under {DEEP_LEVELS} unknown vertices",
            _deep_unknown(DEEP_LEVELS),
        ),
        c(
            "deep-slots",
            "nesting",
            f"slots nested {DEEP_LEVELS} deep",
            _deep_slots(DEEP_LEVELS),
        ),
        # -- unknown resource types -----------------------------------------------
        c(
            "unknown-type-only",
            "unknown-type",
            "a single vertex of type widget",
            _with(_set("resources", [{"type": "widget", "count": 1}])),
        ),
        c(
            "unknown-type-in-slot",
            "unknown-type",
            "a slot asking for an fpga too",
            _with(lambda s: _slot(s)["with"].append({"type": "fpga", "count": 1})),
        ),
        c(
            "unknown-type-above-node",
            "unknown-type",
            "nodes inside a rack",
            _node_with(
                lambda s: s.update(
                    resources=[{"type": "rack", "count": 2, "with": s["resources"]}]
                )
            ),
        ),
        c(
            "empty-type",
            "unknown-type",
            'resource type ""',
            _with(lambda s: _core(s).update(type="")),
        ),
        # -- bad durations --------------------------------------------------------
        c("duration-negative", "duration", "duration -60", _with(_set_duration(-60.0))),
        c("duration-string", "duration", 'duration "1h"', _with(_set_duration("1h"))),
        c(
            "duration-numeric-string",
            "duration",
            'duration "60"',
            _with(_set_duration("60")),
        ),
        c("duration-null", "duration", "duration null", _with(_set_duration(None))),
        c("duration-list", "duration", "duration [60]", _with(_set_duration([60]))),
        c("duration-bool", "duration", "duration true", _with(_set_duration(True))),
    ]
    return out


#: Every hostile case, in submission order.
CASES: tuple[HostileCase, ...] = tuple(_cases())


def cases() -> list[HostileCase]:
    """Fresh copies of :data:`CASES` (a scheduler may mutate what it gets);
    copied through JSON, which a deeply nested case survives."""
    return [
        HostileCase(c.name, c.group, c.what, json.loads(json.dumps(c.jobspec)))
        for c in CASES
    ]


__all__ = ["CASES", "DEEP_LEVELS", "HUGE", "HostileCase", "base", "cases"]
