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
GPUs, the first in table order: the roomiest rank now is kept from pass to
pass in :class:`RoomNow`, and only ranks on which a running job has ended
by then are read again), and its cores the lowest free ones
(:meth:`OneSlotSweep.cores`, worked out when asked: the choice of a rank
needs only counts, since the items on a rank each took cores free of the
others).  The answers are those
:meth:`~flux_sched_base.planner.Planner.earliest` gives the same
questions with reservations placed in the planner; the scheduler tests
ask both and compare every start and R.

The sweep answers only where the planner's one-rank search would read the
plan the same way; elsewhere (a running job overdue, running jobs whose
cores cannot be counted, a pool that holds cores no running job names on
some up rank, an instance expiration, a request the allocator would
refuse) it raises :class:`SweepCannotSay` before changing anything the
caller keeps, and the caller asks the planner instead.
"""

from __future__ import annotations

import bisect
import math

from flux.resource import InfeasibleRequest
from sortedcontainers import SortedList

from flux_sched_base.pool import Rv1SummaryPool

INF = math.inf


class SweepCannotSay(Exception):
    """The sweep cannot answer as the planner would (see the module doc)."""


class RoomNow:
    """The up ranks in the order of the pool's one-slot choice by the
    room their running jobs leave now (most free cores, then GPUs, the
    first in table order): kept from pass to pass, each rank read again
    only when its running jobs change
    (:meth:`~flux_sched_base.planbook.PlanBook.watch_running`).

    A rank where the plan cannot stand for the pool is *odd*: its running
    jobs cannot be counted, or the pool holds a core or GPU there that
    none of them names (a free that did not return all a job held).  The
    pool changes a rank only as a job starts or ends there, so the check
    is made when the rank is read.
    """

    __slots__ = (
        "planner",
        "table",
        "version",
        "changed",
        "order",
        "keys",
        "odd",
    )

    def __init__(self, planner, table) -> None:
        self.planner = planner
        self.table = table
        self.version = planner.ranks_version(())
        self.changed = planner.watch_running()
        self.order = SortedList()  # (-free cores, -free GPUs, position, rank)
        self.keys: dict[int, tuple] = {}
        self.odd: set[int] = set()
        position = planner.table_position(table)
        for rank in planner.up:
            self._read(rank, position)

    @classmethod
    def kept(cls, planner, table, old: RoomNow | None) -> RoomNow:
        """*old* brought up to date, or a new index if it was built for
        another planner or the resources or the pool's table changed
        since."""
        if (
            old is None
            or old.planner is not planner
            or old.version != planner.ranks_version(())
            or old.table is not table
        ):
            if old is not None:
                old.planner.unwatch_running(old.changed)
            return cls(planner, table)
        if old.changed:
            position = planner.table_position(table)
            up = planner.up
            for rank in old.changed:
                if rank in up:
                    old._read(rank, position)
            old.changed.clear()
        return old

    def _read(self, rank: int, position: dict) -> None:
        key = self.keys.pop(rank, None)
        if key is not None:
            self.order.remove(key)
        self.odd.discard(rank)
        steps = self.planner.running_steps(rank)
        info = self.table.get(rank)
        if (
            steps is None
            or info is None
            or not info["allocated_cores"] <= steps[5][0]
            or not info["allocated_gpus"] <= steps[6][0]
        ):
            self.odd.add(rank)
            return
        # Counts leave the same room as sets: the running jobs' cores are
        # the rank's own (running_steps says None otherwise).
        key = (-steps[0], -steps[1], position[rank], rank)
        self.keys[rank] = key
        self.order.add(key)


class OneSlotSweep:
    """Start estimates of one-slot jobs placed in queue order, each from
    the start of the one before (the first strictly after now).

    Built from a :class:`~flux_sched_base.planner.Planner` at its now and
    a :class:`RoomNow` kept up to date (``room``: the one to bring up to
    date, if any; the sweep's own is :attr:`room`); :meth:`place` is
    called for each job in turn, and the object may be kept to place jobs
    that queue behind them later, while the planner's running jobs,
    resources and pool stay as they were (:meth:`context`).
    """

    __slots__ = (
        "planner",
        "impl",
        "room",
        "floor",
        "include_floor",
        "reserved",
        "_touched",
        "_touched_until",
    )

    def __init__(self, planner, room: RoomNow | None = None) -> None:
        impl = getattr(planner.pool, "impl", None)
        if not isinstance(impl, Rv1SummaryPool) or planner.pool.expiration > 0.0:
            raise SweepCannotSay("not a summary pool without expiration")
        if planner.running_ended_by(planner.now):
            raise SweepCannotSay("a running job is overdue")
        self.planner = planner
        self.impl = impl
        self.room = RoomNow.kept(planner, impl._ranks, room)
        self.floor = planner.now
        self.include_floor = False
        #: rank -> [(start, end, number of cores)] of the jobs placed
        #: there so far, in order (which cores each takes: :meth:`cores`).
        self.reserved: dict[int, list[tuple[float, float, int]]] = {}
        # Ranks a running job ends on by _touched_until (the sweep's time
        # only moves forward).
        self._touched: set[int] = set()
        self._touched_until = -INF

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

    def place(self, request) -> tuple[float, float, int] | None:
        """Place *request* at its earliest start from the floor:
        ``(start, end, rank)``, or None if it never fits given what never
        ends (no estimate, and none for the jobs behind it).  Raises
        :class:`SweepCannotSay` (nothing placed) where the planner must
        answer."""
        planner = self.planner
        if self.room.odd:
            raise SweepCannotSay("a rank where the plan cannot stand for the pool")
        size = request.slot_size
        bounds, unknown = planner.rank_bounds(size, 0)
        if unknown:
            raise SweepCannotSay("running jobs that cannot be counted")
        floor = self.floor
        if self.include_floor:
            first = floor
        else:
            # The first job (strictly after now; nothing placed yet): room
            # comes when a running job ends.
            first = planner.next_running_end(floor)
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
            except InfeasibleRequest as exc:
                raise SweepCannotSay("the allocator refuses the request") from exc
            return None
        # The held ranks with room at best: the others are read by _choose.
        held_room = [rank for rank, t in starts.items() if t == best]
        rank = self._choose(best, size, held_room)
        end = planner.window_end(best, request.duration)
        reserved.setdefault(rank, []).append((best, end, size))
        self.floor, self.include_floor = best, True
        return best, end, rank

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
            used = len(busy_c[k]) + sum(n for _, e, n in held if e > t)
            if total - used >= size:
                return t
            # Room comes back only when something on the rank ends.
            nxt = ends[k] if k < len(ends) else INF
            for _, e, _ in held:
                if t < e < nxt:
                    nxt = e
            if nxt > limit:
                return INF
            t = nxt

    def _choose(self, t: float, size: int, held_room: list[int]) -> int:
        """The rank the pool gives one slot of *size* cores at *t* (a time
        some rank has room for it): the roomiest of the ranks with room
        there, *held_room* (those the sweep holds) and the others: the
        first in :class:`RoomNow`'s order (room now), and those on which a
        running job has ended by then, read at *t* (their room only grew,
        so no other rank beats the first on its room now)."""
        reserved = self.reserved
        room = self.room
        best, best_key = None, None
        for key in room.order:
            rank = key[3]
            if rank in reserved:
                continue
            if -key[0] >= size:
                best, best_key = rank, (-key[0], -key[1], -key[2])
            break
        running_steps = self.planner.running_steps
        node_cores = self.planner.node_cores
        touched = self._touched_by(t)
        for rank in (*held_room, *(r for r in touched if r not in reserved)):
            steps = running_steps(rank)
            k = bisect.bisect_right(steps[2], t)
            # The items on a rank hold cores apart (each took free ones):
            # counts say what sets would.
            free_c = node_cores[rank] - len(steps[5][k])
            held = reserved.get(rank)
            if held:
                free_c -= sum(n for _, e, n in held if e > t)
            if free_c >= size:
                free_g = steps[1] + len(steps[6][0]) - len(steps[6][k])
                key = (free_c, free_g, -room.keys[rank][2])
                if best_key is None or key > best_key:
                    best, best_key = rank, key
        if best is None:
            raise SweepCannotSay("no rank with room where one was found")
        return best

    def cores(self) -> dict[int, list[frozenset]]:
        """The cores each job of the sweep gets, rank by rank in the order
        placed: the lowest ones free at its start (the pool's choice)."""
        table = self.impl._ranks
        out = {}
        for rank, held in self.reserved.items():
            steps = self.planner.running_steps(rank)
            taken = []
            for start, _, size in held:
                used = steps[5][bisect.bisect_right(steps[2], start)].union(
                    *(
                        cores
                        for (_, end, _), cores in zip(held, taken, strict=False)
                        if end > start
                    )
                )
                taken.append(frozenset(sorted(table[rank]["cores"] - used)[:size]))
            out[rank] = taken
        return out

    def _touched_by(self, t: float) -> set[int]:
        """The up ranks a running job ends on by *t* (never earlier than
        the last time asked)."""
        if t > self._touched_until:
            planner = self.planner
            running, up, touched = planner.running, planner.up, self._touched
            for _, jobid in planner.running_ends_between(self._touched_until, t):
                touched.update(r for r in running[jobid].ranks if r in up)
            self._touched_until = t
        return self._touched
