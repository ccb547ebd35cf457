"""Job records of the job-manager model, and the constants of RFC 27."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

from flux.idset import IDset
from flux.job import id_encode

SCHED, RUN, CLEANUP, INACTIVE = "SCHED", "RUN", "CLEANUP", "INACTIVE"

ALLOC_SUCCESS, ALLOC_ANNOTATE, ALLOC_DENY, ALLOC_CANCEL = 0, 1, 2, 3

PRIORITY_MIN = 0
PRIORITY_MAX = 4294967295
URGENCY_HOLD = 0
URGENCY_DEFAULT = 16
URGENCY_EXPEDITE = 31


def priority_from_urgency(urgency: int) -> int:
    """flux-core's default priority plugin: priority = urgency, with hold
    (0) mapped to the minimum and expedite (31) to the maximum priority."""
    if urgency == URGENCY_HOLD:
        return PRIORITY_MIN
    if urgency == URGENCY_EXPEDITE:
        return PRIORITY_MAX
    return urgency


@dataclass(eq=False, slots=True)
class Job:
    """One job as the job-manager tracks it (slotted: a long run keeps
    tens of thousands, and each dict more is one more object for the
    garbage collector to walk)."""

    id: int
    jobspec: dict
    userid: int
    urgency: int
    priority: int
    t_submit: float
    runtime: float
    release: list | None = None
    state: str = SCHED
    alloc_queued: bool = False
    alloc_pending: bool = False
    annotations: dict | None = None
    R: dict | None = None
    t_run: float | None = None
    t_end: float | None = None
    expiration: float = 0.0
    result: str | None = None
    exceptions: list = field(default_factory=list)
    has_resources: bool = False
    free_pending: bool = False
    _end_token: int = 0
    #: The jobspec as the JSON text the alloc requests carry.
    jobspec_text: str = "null"
    _f58: str = ""

    @property
    def f58(self) -> str:
        """The job's id in F58 (encoded once: notes name jobs often)."""
        if not self._f58:
            self._f58 = id_encode(self.id, "f58")
        return self._f58

    @property
    def duration(self) -> float:
        """The jobspec's time limit in seconds, or 0 (none) when the
        jobspec does not give a usable one (the job-manager model runs
        hostile jobspecs too: the scheduler, not the model, must deny them)."""
        value = self._duration_number()
        return value if value is not None and 0 < value < math.inf else 0.0

    @property
    def duration_unreadable(self) -> bool:
        """Whether the jobspec gives a duration that is no time limit at all
        (text, a boolean, negative, NaN or infinite): a malformed jobspec,
        which the scheduler must deny."""
        system = _mapping(_mapping(self.jobspec).get("attributes")).get("system")
        if "duration" not in _mapping(system):
            return False
        value = self._duration_number()
        return value is None or not 0 <= value < math.inf

    def _duration_number(self) -> float | None:
        """The jobspec's duration in seconds (absent: 0; an integer too
        large for a float: infinity), or None when it is no number (text,
        a boolean, another type)."""
        system = _mapping(_mapping(self.jobspec).get("attributes")).get("system")
        value = _mapping(system).get("duration", 0)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        try:
            return float(value)
        except OverflowError:
            return math.inf


def _mapping(value) -> dict:
    return value if isinstance(value, dict) else {}


def job_order(job: Job) -> tuple:
    """Alloc queue order: priority (descending), then submission."""
    return (-job.priority, job.t_submit, job.id)


class IdsOutOfRange(ValueError):
    """An idset names ids at or above a bound: ranks, cores or GPUs that the
    machine does not have.  *outside* is the RFC 22 text of those ids,
    computed on the parsed ranges (never expanded)."""

    def __init__(self, outside: str, bound: int):
        super().__init__(f"{outside} (not below {bound})")
        self.outside = outside
        self.bound = bound


@functools.lru_cache(maxsize=4096)
def _members_of_text(text: str) -> frozenset[int]:
    return frozenset(IDset(text))


def idset_members(ids, bound: int | None = None) -> frozenset[int]:
    """The ids of an RFC 22 idset: a string (parsed once, as R repeats the
    same few rank and core lists), or anything else ``IDset`` accepts.

    With *bound*, an idset that names an id at or above it raises
    :class:`IdsOutOfRange` before any id is expanded: a module's R can
    name a billion ranks in a dozen characters.  Raises what ``IDset``
    raises for what it cannot read.
    """
    if isinstance(ids, str):
        if bound is not None and _last_of_text(ids) >= bound:
            _out_of_range(IDset(ids), bound)
        return _members_of_text(ids)
    parsed = IDset(ids)  # ranges only
    if bound is not None and parsed.count() and parsed.last() >= bound:
        _out_of_range(parsed, bound)
    return frozenset(parsed)


@functools.lru_cache(maxsize=4096)
def _last_of_text(text: str) -> int:
    # The highest id, read on the parsed ranges (-1 for an empty set).
    parsed = IDset(text)
    return parsed.last() if parsed.count() else -1


def _out_of_range(parsed: IDset, bound: int):
    outside = parsed if bound <= 0 else parsed.copy().clear(0, bound - 1)
    raise IdsOutOfRange(str(outside), bound)


def R_lite_entries(R) -> list[dict]:
    """The ``execution.R_lite`` entries of an Rv1 object (none when R has no
    ``execution`` or ``R_lite``).  R comes from a module: anything that is
    not the objects and list of Rv1 raises :class:`ValueError`."""
    if not isinstance(R, dict):
        raise ValueError(f"R is {_json_type(R)}, not an object")
    execution = R.get("execution")
    if execution is None:
        return []
    if not isinstance(execution, dict):
        raise ValueError(f"execution is {_json_type(execution)}, not an object")
    entries = execution.get("R_lite")
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise ValueError(f"execution.R_lite is {_json_type(entries)}, not an array")
    for entry in entries:
        if not isinstance(entry, dict):
            raise ValueError(f"an R_lite entry is {_json_type(entry)}, not an object")
    return entries


def _json_type(value) -> str:
    """How a JSON value is named in a message (never the value itself,
    which a module may have made huge)."""
    if isinstance(value, bool):
        return "a boolean"
    for kind, name in ((dict, "an object"), (list, "an array"), (str, "a string")):
        if isinstance(value, kind):
            return name
    if isinstance(value, (int, float)):
        return "a number"
    return "null" if value is None else type(value).__name__


def ranks_of(R: dict | None, bound: int | None = None) -> set[int]:
    """The broker ranks an Rv1 object covers.  See :func:`idset_members`
    for *bound*; an R that cannot be read raises :class:`ValueError` (or
    :class:`TypeError`, from ``IDset``)."""
    ranks: set[int] = set()
    if not R:
        return ranks
    for entry in R_lite_entries(R):
        ranks.update(idset_members(entry.get("rank", ""), bound))
    return ranks
