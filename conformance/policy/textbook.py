"""FIFO, EASY and conservative backfilling by their textbook definitions.

A count-based model for machines of identical nodes where every job asks
for whole nodes (or, equivalently, identical single-core nodes where a job
asks for cores): a job needs ``nodes``, runs for at most its ``limit``,
and is expected to end at ``start + limit``.  It shares no code with the
project's planner, so it can judge it.

The decision functions answer one question: given the running jobs and the
queue (in queue order: priority, then submission) at time ``now``, which
jobs does the policy start now?  :func:`simulate` replays a whole workload
with them.

- FIFO starts jobs from the head while they fit; the first that does not
  fit blocks everything behind it.
- Backfilling with reservation depth N (:func:`backfill_starts`): jobs are
  taken in queue order; a job that fits now, for its whole limit, around
  the reservations made so far starts now; a job that does not gets the
  earliest reservation that fits (while fewer than N reservations exist),
  else it waits.  N = 1 is EASY (the head's reservation sits at the shadow
  time; a later job starts if it ends by then or uses only the extra
  nodes); N = None is conservative backfilling (every queued job holds the
  earliest reservation that fits given the running jobs and the jobs ahead
  of it, recomputed whenever anything changes, so reservations compress
  when jobs end early).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Running:
    """A running job: how many nodes it holds and when it is expected to end."""

    nodes: int
    end: float


@dataclass(frozen=True)
class Queued:
    """A queued job, identified by *key*."""

    key: Hashable
    nodes: int
    limit: float


class _Profile:
    """Free nodes over time: a step function built from (time, delta) steps."""

    def __init__(self, now: float, total: int, running: Iterable[Running]):
        self.now = now
        self.free_now = total
        self.steps: dict[float, int] = {}
        for r in running:
            self.free_now -= r.nodes
            self._add(max(r.end, now), r.nodes)

    def _add(self, when: float, delta: int) -> None:
        if when <= self.now:
            self.free_now += delta
        else:
            self.steps[when] = self.steps.get(when, 0) + delta

    def _timeline(self) -> list[tuple[float, int]]:
        """(time, free nodes from then on), starting at now."""
        out = [(self.now, self.free_now)]
        free = self.free_now
        for when in sorted(self.steps):
            free += self.steps[when]
            out.append((when, free))
        return out

    def fits(self, start: float, nodes: int, limit: float) -> bool:
        end = start + limit
        line = self._timeline()
        for i, (when, free) in enumerate(line):
            until = line[i + 1][0] if i + 1 < len(line) else float("inf")
            if until > start and when < end and free < nodes:
                return False
        return True

    def earliest(self, nodes: int, limit: float) -> float | None:
        for when, _ in self._timeline():
            if self.fits(when, nodes, limit):
                return when
        return None

    def hold(self, start: float, nodes: int, limit: float) -> None:
        self._add(start, -nodes)
        self._add(start + limit, nodes)


def fifo_starts(
    now: float, total: int, running: Iterable[Running], queue: Sequence[Queued]
) -> list[Hashable]:
    """The jobs strict FIFO starts now."""
    free = total - sum(r.nodes for r in running)
    out = []
    for job in queue:
        if job.nodes > free:
            break
        out.append(job.key)
        free -= job.nodes
    return out


def backfill_starts(
    now: float,
    total: int,
    running: Iterable[Running],
    queue: Sequence[Queued],
    depth: int | None = 1,
) -> list[Hashable]:
    """The jobs backfilling with reservation *depth* starts now (1: EASY,
    None: conservative)."""
    profile = _Profile(now, total, running)
    reserved = 0
    out = []
    for job in queue:
        if job.nodes > total:
            continue  # can never run; a scheduler denies it
        if profile.fits(now, job.nodes, job.limit):
            profile.hold(now, job.nodes, job.limit)
            out.append(job.key)
        elif depth is None or reserved < depth:
            start = profile.earliest(job.nodes, job.limit)
            profile.hold(start, job.nodes, job.limit)
            reserved += 1
    return out


def reservations(
    now: float, total: int, running: Iterable[Running], queue: Sequence[Queued]
) -> dict[Hashable, float]:
    """Conservative backfilling's planned start of every queued job."""
    profile = _Profile(now, total, running)
    out = {}
    for job in queue:
        if job.nodes > total:
            continue
        start = profile.earliest(job.nodes, job.limit)
        profile.hold(start, job.nodes, job.limit)
        out[job.key] = start
    return out


def starts(policy: str, now, total, running, queue) -> list[Hashable]:
    """Dispatch on a policy name: ``fifo``, ``easy`` or ``conservative``."""
    if policy == "fifo":
        return fifo_starts(now, total, running, queue)
    if policy == "easy":
        return backfill_starts(now, total, running, queue, depth=1)
    if policy == "conservative":
        return backfill_starts(now, total, running, queue, depth=None)
    raise ValueError(f"no textbook model for policy {policy!r}")


@dataclass(frozen=True)
class WorkloadJob:
    """A job of a workload: submitted at *submit*, runs min(runtime, limit)."""

    key: Hashable
    submit: float
    nodes: int
    limit: float
    runtime: float


def simulate(policy: str, total: int, jobs: Sequence[WorkloadJob]) -> dict:
    """Replay *jobs* (queue order = submission order) under *policy*;
    return job key -> start time.  At each instant, jobs end, then jobs
    arrive, then the policy decides."""
    pending = sorted(jobs, key=lambda j: j.submit)
    queue: list[WorkloadJob] = []
    running: dict[Hashable, tuple[WorkloadJob, float]] = {}  # key -> job, start
    started: dict[Hashable, float] = {}
    i = 0
    while i < len(pending) or queue:
        ends = [s + min(j.runtime, j.limit) for j, s in running.values()]
        candidates = ends + ([pending[i].submit] if i < len(pending) else [])
        if not candidates:
            break  # queue holds only jobs that can never run
        now = min(candidates)
        for key, (j, s) in list(running.items()):
            if s + min(j.runtime, j.limit) <= now:
                del running[key]
        while i < len(pending) and pending[i].submit <= now:
            queue.append(pending[i])
            i += 1
        chosen = starts(
            policy,
            now,
            total,
            [Running(j.nodes, s + j.limit) for j, s in running.values()],
            [Queued(j.key, j.nodes, j.limit) for j in queue],
        )
        chosen_set = set(chosen)
        for j in queue:
            if j.key in chosen_set:
                running[j.key] = (j, now)
                started[j.key] = now
        queue = [j for j in queue if j.key not in chosen_set]
        if not running and i >= len(pending):
            break
    return started


__all__ = [
    "Queued",
    "Running",
    "WorkloadJob",
    "backfill_starts",
    "fifo_starts",
    "reservations",
    "simulate",
    "starts",
]
