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


@dataclass(eq=False)
class Job:
    """One job as the job-manager tracks it."""

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

    @functools.cached_property
    def f58(self) -> str:
        """The job's id in F58 (encoded once: notes name jobs often)."""
        return id_encode(self.id, "f58")

    @property
    def duration(self) -> float:
        """The jobspec's time limit in seconds, or 0 (none) when the
        jobspec does not give a usable one (the job-manager model runs
        hostile jobspecs too: the scheduler, not the model, must deny them)."""
        system = _mapping(_mapping(self.jobspec).get("attributes")).get("system")
        value = _mapping(system).get("duration", 0)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return 0.0
        return float(value) if 0 < value < math.inf else 0.0


def _mapping(value) -> dict:
    return value if isinstance(value, dict) else {}


def job_order(job: Job) -> tuple:
    """Alloc queue order: priority (descending), then submission."""
    return (-job.priority, job.t_submit, job.id)


@functools.lru_cache(maxsize=4096)
def _members_of_text(text: str) -> frozenset[int]:
    return frozenset(IDset(text))


def idset_members(ids) -> frozenset[int]:
    """The ids of an RFC 22 idset: a string (parsed once, as R repeats the
    same few rank and core lists), or anything else ``IDset`` accepts.
    Raises what ``IDset`` raises for what it cannot read."""
    if isinstance(ids, str):
        return _members_of_text(ids)
    return frozenset(IDset(ids))


def ranks_of(R: dict | None) -> set[int]:
    """The broker ranks an Rv1 object covers."""
    ranks: set[int] = set()
    if not R:
        return ranks
    for entry in (R.get("execution") or {}).get("R_lite", []):
        ranks.update(idset_members(entry.get("rank", "")))
    return ranks
