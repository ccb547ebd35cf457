"""The typed reader behind scenario validation, and :class:`ScenarioError`.

:class:`Reader` checks one value at a time (a mapping with known keys, an
integer in range, an idset, a job name defined earlier, a job shorthand)
and raises :class:`ScenarioError` naming the file, the step and the key.
:mod:`conformance.scenarios.schema` uses it section by section.
"""

from __future__ import annotations

import math
import re
from typing import Any

from mock_broker.jobspec import make_jobspec

#: The keys of the job shorthand (or a raw ``jobspec``).
SHAPE_KEYS = ("nodes", "slots", "cores", "gpus", "duration", "exclusive")
SHAPE_KEYS += ("constraints", "jobspec")

_IDSET = re.compile(r"^(0|[1-9][0-9]*)(-(0|[1-9][0-9]*))?$")


class ScenarioError(ValueError):
    """A scenario file does not follow the schema.

    The message reads ``FILE: step N: KEY: what is wrong`` (``step N`` only
    for errors inside ``steps``); the parts are kept as attributes.
    """

    def __init__(self, path: str, key: str, message: str, step: int | None = None):
        self.path, self.key, self.step, self.reason = str(path), key, step, message
        where = f"step {step}: " if step is not None else ""
        super().__init__(f"{path}: {where}{key}: {message}")


class Reader:
    """Type checks that raise ScenarioError with file, step and key."""

    def __init__(self, path: str):
        self.path = path
        self.step: int | None = None

    def fail(self, key: str, message: str):
        raise ScenarioError(self.path, key, message, self.step)

    def mapping(self, value, key, allowed, required=()) -> dict:
        if not isinstance(value, dict):
            self.fail(key, f"expected a mapping, got {show(value)}")
        for k in value:
            if not isinstance(k, str) or k not in allowed:
                self.fail(
                    join_key(key, k), f"unknown key (allowed: {', '.join(allowed)})"
                )
        for k in required:
            if k not in value:
                self.fail(join_key(key, k), "is required")
        return value

    def integer(self, value, key, lo: int | None = 0, hi: int | None = None) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(key, f"expected an integer, got {show(value)}")
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            self.fail(key, f"{value} is outside {lo}-{hi if hi is not None else 'inf'}")
        return value

    def number(self, value, key, positive: bool = False) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.fail(key, f"expected a number, got {show(value)}")
        if not math.isfinite(value) or value < 0 or (positive and value == 0):
            self.fail(key, f"expected a {'positive' if positive else '>= 0'} number")
        return float(value)

    def string(self, value, key) -> str:
        if not isinstance(value, str) or not value:
            self.fail(key, f"expected a non-empty string, got {show(value)}")
        return value

    def boolean(self, value, key) -> bool:
        if not isinstance(value, bool):
            self.fail(key, f"expected true or false, got {show(value)}")
        return value

    def strings(self, value, key) -> list[str]:
        if not isinstance(value, list):
            self.fail(key, f"expected a list of strings, got {show(value)}")
        return [self.string(v, f"{key}[{i}]") for i, v in enumerate(value)]

    def idset(self, value, key) -> list[int]:
        """Ranks as ``"0-3,7"``, one integer, or a list of integers."""
        if isinstance(value, int) and not isinstance(value, bool):
            return [self.integer(value, key)]
        if isinstance(value, list):
            return sorted({self.integer(v, f"{key}[{i}]") for i, v in enumerate(value)})
        if isinstance(value, str):
            ids: set[int] = set()
            for part in value.strip("[]").split(","):
                m = _IDSET.match(part.strip())
                if not m or (m.group(3) and int(m.group(3)) <= int(m.group(1))):
                    self.fail(key, f"{value!r} is not an idset like '0-3,7'")
                hi = int(m.group(3)) if m.group(3) else int(m.group(1))
                ids.update(range(int(m.group(1)), hi + 1))
            return sorted(ids)
        self.fail(
            key, f"expected ranks ('0-3,7', an integer or a list), got {show(value)}"
        )

    def job_name(self, value, key, known) -> str:
        name = self.string(value, key)
        if name not in known:
            self.fail(key, f"no job named {name!r} is defined before this point")
        return name


def join_key(key: str, sub) -> str:
    """``key.sub``, or ``sub`` at the top level."""
    return f"{key}.{sub}" if key else str(sub)


def show(value) -> str:
    """A short repr of a bad value for an error message."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


# -- jobs -----------------------------------------------------------------------


def read_jobspec(r: Reader, value: dict, key: str) -> dict:
    """The jobspec of a submit/feasibility/running entry (shorthand or raw)."""
    if "jobspec" in value:
        for k in SHAPE_KEYS:
            if k != "jobspec" and k in value:
                r.fail(join_key(key, k), "give either jobspec or the shorthand keys")
        return r.mapping(value["jobspec"], join_key(key, "jobspec"), value["jobspec"])
    nodes = value.get("nodes")
    kwargs: dict[str, Any] = {}
    if nodes is not None:
        kwargs["nodes"] = r.integer(nodes, join_key(key, "nodes"), lo=1)
    default_slots = kwargs.get("nodes", 1)
    kwargs["slots"] = r.integer(
        value.get("slots", default_slots), join_key(key, "slots"), 1
    )
    kwargs["cores"] = r.integer(value.get("cores", 1), join_key(key, "cores"), lo=1)
    kwargs["gpus"] = r.integer(value.get("gpus", 0), join_key(key, "gpus"))
    kwargs["duration"] = r.number(value.get("duration", 0), join_key(key, "duration"))
    if "exclusive" in value:
        kwargs["exclusive"] = r.boolean(value["exclusive"], join_key(key, "exclusive"))
    if "constraints" in value:
        c = value["constraints"]
        kwargs["constraints"] = r.mapping(c, join_key(key, "constraints"), c)
    try:
        return make_jobspec(**kwargs)
    except ValueError as exc:
        r.fail(key, str(exc))


def read_release_plan(r: Reader, value, key: str) -> list:
    """A housekeeping plan: ``[[delay, ranks], ...]``."""
    if not isinstance(value, list) or not value:
        r.fail(key, "expected a list of [delay, ranks] pairs")
    plan = []
    for i, item in enumerate(value):
        if not isinstance(item, list) or len(item) != 2:
            r.fail(f"{key}[{i}]", f"expected [delay, ranks], got {show(item)}")
        delay = r.number(item[0], f"{key}[{i}][0]")
        plan.append([delay, r.idset(item[1], f"{key}[{i}][1]")])
    return plan


def new_job_name(r: Reader, value, key: str, known: set[str]) -> str:
    """Define a job name; *known* collects the names defined so far."""
    name = r.string(value, key)
    if name in known:
        r.fail(key, f"job name {name!r} is already used")
    known.add(name)
    return name
