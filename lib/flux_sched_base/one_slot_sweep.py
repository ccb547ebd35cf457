"""FIFO start estimates for one-slot jobs, found in one sweep forward.

A FIFO forecast places the queued jobs in order, each at the earliest
time it fits from the start of the job ahead of it, given the running
jobs and the jobs ahead as placed (see ``schedkit-fifo``).  Because every
job ahead starts at or before that floor, nothing in the plan starts after
it: from the floor on, what a rank holds only shrinks, so a job fits over
its whole window wherever it fits at its start, and time only moves
forward from one job to the next.  :class:`OneSlotSweep` uses that for
jobs of one slot of cores and no GPUs on
:class:`~flux_sched_base.pool.Rv1SummaryPool`: each rank's first time to
host a slot size given its running jobs alone is the planner's kept
:meth:`~flux_sched_base.planbook.PlanBook.rank_bounds`, and only the few
ranks the sweep has placed jobs on are read step by step.  The rank a job
gets is the pool's own choice at its start (the most free cores, then
GPUs, the first in table order) and its cores the lowest free ones, as
:meth:`~flux_sched_base.planner.Planner.earliest` answers the same
questions, without placing reservations in the planner.

The sweep answers only where the planner's one-rank search would read the
plan the same way; elsewhere (a running job overdue, running jobs whose
cores cannot be counted, a pool that holds cores no running job names on
a rank the sweep reads, an instance expiration, a request the allocator
would refuse) it raises :class:`SweepCannotSay` before changing anything
the caller keeps, and the caller asks the planner instead.
"""

from __future__ import annotations

import bisect
import math

from flux_sched_base.pool import Rv1SummaryPool, room_left

INF = math.inf


class SweepCannotSay(Exception):
    """The sweep cannot answer as the planner would (see the module doc)."""


class OneSlotSweep:
    """Start estimates of one-slot jobs placed in queue order, each from
    the start of the one before (the first strictly after now).

    Built from a :class:`~flux_sched_base.planner.Planner` at its now;
    :meth:`place` is called for each job in turn and the object may be
    kept to place jobs that queue behind them later, while the planner's
    running jobs, resources and pool stay as they were (:meth:`context`).
    """

    __slots__ = (
        "planner",
        "impl",
        "floor",
        "include_floor",
        "reserved",
        "_position",
        "_now_keys",
    )

    def __init__(self, planner) -> None:
        impl = getattr(planner.pool, "impl", None)
        if not isinstance(impl, Rv1SummaryPool) or planner.pool.expiration > 0.0:
            raise SweepCannotSay("not a summary pool without expiration")
        if planner.running_ended_by(planner.now):
            raise SweepCannotSay("a running job is overdue")
        self.planner = planner
        self.impl = impl
        self.floor = planner.now
        self.include_floor = False
        #: rank -> [(end, cores)] of the jobs placed there so far.
        self.reserved: dict[int, list[tuple[float, frozenset]]] = {}
        self._position = planner._table_position(impl._ranks)
        self._now_keys: dict[int, tuple] = {}

    @staticmethod
    def context(planner) -> tuple:
        """What a kept sweep depends on besides now: the running jobs and
        up ranks, the resources, the pool's generation."""
        impl = getattr(planner.pool, "impl", None)
        return (
            planner.releases.version,
            planner.ranks_version(()),
            getattr(impl, "generation", None),
        )

    def takes(self, request) -> bool:
        """Is *request* one the sweep places (one slot of cores, no GPUs,
        no constraint, placed by the pool's own one-slot rule)?"""
        return (
            self.impl.places_by_one_slot_rank(request)
            and getattr(request, "constraint", None) is None
        )

    def place(self, request) -> tuple[float, float, int, frozenset] | None:
        """Place *request* at its earliest start from the floor:
        ``(start, end, rank, cores)``, or None if it never fits given what
        never ends (no estimate, and none for the jobs behind it).  Raises
        :class:`SweepCannotSay` (nothing placed) where the planner must
        answer."""
        planner = self.planner
        size = request.slot_size
        bounds, unknown = planner.rank_bounds(size, 0)
        if unknown:
            raise SweepCannotSay("running jobs that cannot be counted")
        floor = self.floor
        if self.include_floor:
            first = floor
        else:
            first = min(planner.next_running_end(floor), self._next_reserved_end(floor))
        reserved = self.reserved
        best = INF
        for bound, rank in bounds:
            if rank not in reserved:
                # The first rank no job of the sweep holds that its running
                # jobs alone let host the slot: every other one does so later.
                best = max(bound, first)
                break
        starts = {}
        for rank in reserved:
            starts[rank] = t = self._first_room(rank, size, first, best)
            if t < best:
                best = t
        if best == INF:
            try:
                planner.pool.check_feasibility(request)
            except Exception as exc:
                raise SweepCannotSay("the allocator refuses the request") from exc
            return None
        # Ranks with room at best: those no job of the sweep holds whose
        # running jobs allow it by then, and the held ones that reach it.
        candidates = [
            rank
            for _, rank in bounds.irange(maximum=(best, INF))
            if rank not in reserved
        ]
        candidates.extend(rank for rank, t in starts.items() if t == best)
        rank, cores = self._choose(best, size, candidates)
        end = planner.window_end(best, request.duration)
        reserved.setdefault(rank, []).append((end, cores))
        self.floor, self.include_floor = best, True
        return best, end, rank, cores

    def _next_reserved_end(self, t: float) -> float:
        return min(
            (end for held in self.reserved.values() for end, _ in held if end > t),
            default=INF,
        )

    def _first_room(self, rank: int, size: int, first: float, limit: float) -> float:
        """The first time from *first* (a candidate) and up to *limit*
        that *rank* has *size* cores free given its running jobs and the
        jobs of the sweep on it; ``inf`` if none."""
        planner = self.planner
        bound = planner.rank_bound(rank, size, 0)
        if bound is None:
            raise SweepCannotSay("running jobs that cannot be counted")
        t = max(bound, first)
        if t > limit:
            return INF  # (a tie at the limit counts: the choice reads it)
        steps = planner.running_steps(rank)
        ends, busy_c = steps[2], steps[5]
        total = planner.node_cores.get(rank, 0)
        held = self.reserved[rank]
        while True:
            k = bisect.bisect_right(ends, t)
            used = busy_c[k].union(*(cores for e, cores in held if e > t))
            if total - len(used) >= size:
                return t
            # Room comes back only when something on the rank ends.
            nxt = ends[k] if k < len(ends) else INF
            for e, _ in held:
                if t < e < nxt:
                    nxt = e
            if nxt > limit:
                return INF
            t = nxt

    def _choose(self, t: float, size: int, candidates: list[int]):
        """``(rank, cores)`` the pool gives one slot of *size* cores at *t*
        among *candidates* (the ranks with room there)."""
        table = self.impl._ranks
        reserved = self.reserved
        now_keys = self._now_keys
        running_steps = self.planner.running_steps
        best, best_key = None, None
        for rank in candidates:
            entry = now_keys.get(rank)
            if entry is None:
                entry = now_keys[rank] = self._now_key(rank)
            if entry[0] > t and rank not in reserved:
                key = entry[1]  # nothing on it has ended by t
            else:
                steps = running_steps(rank)
                k = bisect.bisect_right(steps[2], t)
                used_c, used_g = steps[5][k], steps[6][k]
                held = reserved.get(rank)
                if held:
                    used_c = used_c.union(*(cores for e, cores in held if e > t))
                info = table[rank]
                key = (
                    *room_left(info["cores"], info["gpus"], used_c, used_g),
                    entry[1][2],
                )
            if key[0] >= size and (best_key is None or key > best_key):
                best, best_key = rank, key
        if best is None:
            raise SweepCannotSay("no rank with room where one was found")
        steps = running_steps(best)
        used_c = steps[5][bisect.bisect_right(steps[2], t)]
        held = reserved.get(best)
        if held:
            used_c = used_c.union(*(cores for e, cores in held if e > t))
        free = sorted(table[best]["cores"] - used_c)[:size]
        return best, frozenset(free)

    def _now_key(self, rank: int) -> tuple[float, tuple]:
        """``(first end, room key)`` of a rank as its running jobs leave
        it now: when the first of them ends, and ``(free cores, free GPUs,
        minus table position)``, the order of the pool's choice.  Read once
        a sweep, after checking that the pool's choice can be read from the
        plan there: the pool holds no core or GPU the running jobs do not
        (the planner's search reads every rank with room, and every rank
        the sweep holds, the same way)."""
        steps = self.planner.running_steps(rank)
        if steps is None:
            raise SweepCannotSay("running jobs that cannot be counted")
        info = self.impl._ranks[rank]
        if not (
            info["allocated_cores"] <= steps[5][0]
            and info["allocated_gpus"] <= steps[6][0]
        ):
            raise SweepCannotSay("the pool holds cores no running job names")
        ends = steps[2]
        # Counts leave the same room as sets: the running jobs' cores are
        # the rank's own (running_steps says None otherwise).
        return (ends[0] if ends else INF), (steps[0], steps[1], -self._position[rank])
