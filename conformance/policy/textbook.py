"""FIFO, EASY and conservative backfilling by their textbook definitions.

A count-based model for machines of identical nodes where every job asks
for whole nodes (or, equivalently, identical single-core nodes where a job
asks for cores): a job needs ``nodes``, runs for at most its ``limit``,
and is expected to end at ``start + limit`` (a limit of 0 or less means
none: the job is never expected to end).  It shares no code with the
project's planner, so it can judge it.

The decision functions answer one question: given the running jobs and the
queue (in queue order: priority, then submission) at time ``now``, which
jobs does the policy start now?  :func:`simulate` replays a whole workload
with them.

- FIFO starts jobs from the head while they fit; the first that does not
  fit blocks everything behind it.
- Backfilling with reservation depth N (:func:`plan`,
  :func:`backfill_starts`): jobs are taken in queue order; a job that
  fits now, for its whole limit, around the reservations made so far
  starts now; a job that does not gets the earliest reservation that fits
  (while fewer than N reservations exist), else it waits.  N = 1 is EASY
  (the head's reservation sits at the shadow time; a later job starts if
  it ends by then or uses only the extra nodes; the shadow time, computed
  afresh at every instant, can only move earlier when nothing overruns).
  N = None is conservative backfilling (Mu'alem and Feitelson 2001): every
  queued job holds a reservation.  A new job gets the earliest one that
  fits around the running jobs and every reservation already held; when
  jobs end early the schedule is *compressed*: in queue order, each job
  gives up its reservation and takes the earliest that fits around all
  the others (its old one still fits, so it never moves later).  The
  reservations held so far are the *held* argument; without them every
  job is placed afresh in queue order, which is the same as long as no
  job has ended early.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Hashable, Iterable, Mapping, Sequence
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


#: Times closer than this (seconds) are the same time: sums of times read
#: from a clock near 1.7e9 s carry rounding errors of about 1e-7 s.
RESOLUTION = 1e-5


def _end(start: float, limit: float) -> float:
    return start + limit if limit > 0 else math.inf


class _Profile:
    """Free nodes from *now* on: a step function kept as breakpoints.

    ``free[i]`` nodes are free from ``times[i]`` until ``times[i + 1]`` (the
    last step lasts forever); ``times[0]`` is now.  Breakpoints are at least
    :data:`RESOLUTION` apart: a time that close to one is that one.
    """

    def __init__(self, now: float, total: int, running: Iterable[Running]):
        self.now = now
        self.times = [now]
        self.free = [total]
        for r in running:
            self.add(now, r.end, -r.nodes)

    def _split(self, when: float) -> int:
        """The index of the breakpoint at *when* (made if missing)."""
        times = self.times
        i = bisect_left(times, when - RESOLUTION)
        if i == len(times) or times[i] > when + RESOLUTION:
            times.insert(i, when)
            self.free.insert(i, self.free[i - 1])
        return i

    def add(self, start: float, end: float, delta: int) -> None:
        """Add *delta* free nodes from *start* until *end*."""
        start = max(start, self.now)
        if end <= start + RESOLUTION:
            return
        i = self._split(start)
        j = len(self.times) if end == math.inf else self._split(end)
        free = self.free
        for k in range(i, j):
            free[k] += delta

    def hold(self, start: float, nodes: int, limit: float) -> None:
        self.add(start, _end(start, limit), -nodes)

    def release(self, start: float, nodes: int, limit: float) -> None:
        self.add(start, _end(start, limit), nodes)

    def fits(self, start: float, nodes: int, limit: float) -> bool:
        """True if *nodes* are free from *start* for *limit* seconds."""
        times, free = self.times, self.free
        end = _end(start, limit) - RESOLUTION
        k = max(bisect_right(times, start + RESOLUTION) - 1, 0)
        while k < len(times) and times[k] < end:
            if free[k] < nodes:
                return False
            k += 1
        return True

    def earliest(self, nodes: int, limit: float) -> float | None:
        """The earliest breakpoint from which *nodes* stay free for *limit*
        seconds, or None if there is none."""
        times, free = self.times, self.free
        n = len(times)
        i = 0
        while i < n:
            if free[i] < nodes:
                i += 1
                continue
            end = _end(times[i], limit) - RESOLUTION
            k = i + 1
            while k < n and times[k] < end:
                if free[k] < nodes:
                    break
                k += 1
            else:
                return times[i]
            i = k + 1
        return None


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


def plan(
    now: float,
    total: int,
    running: Iterable[Running],
    queue: Sequence[Queued],
    depth: int | None = 1,
    held: Mapping[Hashable, float] | None = None,
) -> dict[Hashable, float]:
    """Backfilling with reservation *depth* (1: EASY, None: conservative):
    job key -> start, *now* for the jobs it starts now, the reservation
    for the jobs that hold one, in queue order.

    *held* (conservative only): the reservations queued jobs hold from
    before, which are compressed rather than placed afresh.
    """
    profile = _Profile(now, total, running)
    held = dict(held or {}) if depth is None else {}
    for job in queue:
        if job.key in held and job.nodes <= total:
            profile.hold(held[job.key], job.nodes, job.limit)
    reserved = 0
    out: dict[Hashable, float] = {}
    for job in queue:
        if job.nodes > total:
            continue  # can never run; a scheduler denies it
        if job.key in held:
            profile.release(held[job.key], job.nodes, job.limit)
        start = profile.earliest(job.nodes, job.limit)
        if start is None:
            continue  # behind jobs that never end
        if start > now:
            if depth is not None and reserved >= depth:
                continue
            reserved += 1
        profile.hold(start, job.nodes, job.limit)
        out[job.key] = start
    return out


def backfill_starts(
    now: float,
    total: int,
    running: Iterable[Running],
    queue: Sequence[Queued],
    depth: int | None = 1,
    held: Mapping[Hashable, float] | None = None,
) -> list[Hashable]:
    """The jobs backfilling with reservation *depth* starts now (1: EASY,
    None: conservative, with *held* reservations as in :func:`plan`)."""
    return [
        k for k, s in plan(now, total, running, queue, depth, held).items() if s <= now
    ]


def reservations(
    now: float,
    total: int,
    running: Iterable[Running],
    queue: Sequence[Queued],
    held: Mapping[Hashable, float] | None = None,
) -> dict[Hashable, float]:
    """Conservative backfilling's planned start of every queued job (now for
    those it starts now)."""
    return plan(now, total, running, queue, None, held)


def earliest_start(
    now: float, total: int, running: Iterable[Running], nodes: int, limit: float
) -> float | None:
    """The earliest time from which a job of *nodes* and *limit* fits
    around *running* (None: never)."""
    if nodes > total:
        return None
    return _Profile(now, total, running).earliest(nodes, limit)


def starts(policy: str, now, total, running, queue, held=None) -> list[Hashable]:
    """Dispatch on a policy name: ``fifo``, ``easy`` or ``conservative``
    (*held*: conservative's reservations, see :func:`plan`)."""
    if policy == "fifo":
        return fifo_starts(now, total, running, queue)
    if policy == "easy":
        return backfill_starts(now, total, running, queue, depth=1)
    if policy == "conservative":
        return backfill_starts(now, total, running, queue, None, held)
    raise ValueError(f"no textbook model for policy {policy!r}")


@dataclass(frozen=True)
class WorkloadJob:
    """A job of a workload: submitted at *submit*, runs min(runtime, limit)."""

    key: Hashable
    submit: float
    nodes: int
    limit: float
    runtime: float


def _ran(job: WorkloadJob) -> float:
    return min(job.runtime, job.limit) if job.limit > 0 else job.runtime


def simulate(policy: str, total: int, jobs: Sequence[WorkloadJob]) -> dict:
    """Replay *jobs* (queue order = submission order) under *policy*;
    return job key -> start time.  At each instant, jobs end, then jobs
    arrive, then the policy decides (conservative keeps its reservations
    from instant to instant)."""
    pending = sorted(jobs, key=lambda j: j.submit)
    queue: list[WorkloadJob] = []
    running: dict[Hashable, tuple[WorkloadJob, float]] = {}  # key -> job, start
    started: dict[Hashable, float] = {}
    held: dict[Hashable, float] = {}
    i = 0
    while i < len(pending) or queue:
        ends = [s + _ran(j) for j, s in running.values()]
        candidates = ends + ([pending[i].submit] if i < len(pending) else [])
        if not candidates:
            break  # queue holds only jobs that can never run
        now = min(candidates)
        for key, (j, s) in list(running.items()):
            if s + _ran(j) <= now:
                del running[key]
        while i < len(pending) and pending[i].submit <= now:
            queue.append(pending[i])
            i += 1
        run = [Running(j.nodes, _end(s, j.limit)) for j, s in running.values()]
        wait = [Queued(j.key, j.nodes, j.limit) for j in queue]
        if policy == "conservative":
            planned = plan(now, total, run, wait, None, held)
            chosen = [k for k, s in planned.items() if s <= now]
            held = {k: s for k, s in planned.items() if s > now}
        else:
            chosen = starts(policy, now, total, run, wait)
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
    "RESOLUTION",
    "Queued",
    "Running",
    "WorkloadJob",
    "backfill_starts",
    "earliest_start",
    "fifo_starts",
    "plan",
    "reservations",
    "simulate",
    "starts",
]
