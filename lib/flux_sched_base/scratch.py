"""A scratch copy of the pool that shows what is unavailable in one window.

To ask "does this request fit during ``[t, t + duration)``?" with the pool's
own allocator, the planner needs a pool in which exactly the resources that
are busy at some instant of that window are allocated: running jobs that
have not ended by *t*, and reservations that overlap the window.  Building
such a pool from scratch for every question would cost a full copy each
time, so :class:`Scratch` keeps one copy per scheduling pass and moves it
from window to window by freeing and registering allocations.

Two items registered in the same scratch may hold the same cores (a running
job that ends at 100 and a reservation that starts there, both overlapping
a window ``[50, 150)``).  On a pool built on flux-python's ``Rv1Pool``
(the reference schedulers' own included), the copy counts, for every core
and GPU, the present items that hold it, and marks it allocated in the
pool's rank table while the count is above zero: moving an item costs a
step per core it holds.  On any other pool, items go through the pool's
``register_alloc`` and ``free``, and since freeing one would release
cores another still holds, every free is followed by a *repair* that
registers again the present items sharing resources with the freed one.
"""

from __future__ import annotations

import math

from flux.idset import IDset
from flux.resource.Rv1Pool import Rv1Pool

from flux_sched_base.pool import Rv1SummaryPool

INF = math.inf


class Scratch:
    """One pool copy, moved between windows by :meth:`goto`.

    Args:
        planner: the :class:`~flux_sched_base.planner.Planner` whose items
            (running jobs, reservations) the windows are made of.
        now: the pass's current time; a window starting at *now* keeps every
            running job, even one past its planned end.
    """

    #: Count holders on pools built on ``Rv1Pool`` (False: always go
    #: through the pool's ``register_alloc`` and ``free``, as for other
    #: pools; the tests check both ways).
    count_holders = True

    #: After every move, compare the copy with what the window holds,
    #: failing on a difference (tests).
    check_windows = False

    def __init__(self, planner, now: float):
        self.planner = planner
        self.pool = planner.pool.copy()
        impl = getattr(self.pool, "impl", None)
        #: The copy's rank table, when its allocated cores and GPUs are
        #: kept by counting holders (see the module doc); else None.
        counting = self.count_holders and isinstance(impl, Rv1Pool)
        self._table = impl._ranks if counting else None
        self._impl = impl
        #: Per rank, ``(core holders, GPU holders)`` (``{id: count}``),
        #: counted when an item on the rank first moves.
        self._holders: dict[int, tuple[dict, dict]] = {}
        #: Running jobs that started after the copy was made.
        self._started: set[int] = set()
        #: Per counted rank, the cores and GPUs allocated in the copy when
        #: it was made that no running job named.
        self._unnamed: dict[int, tuple[set, set]] = {}
        self.now = now
        self.t = now
        #: Running jobs freed in this copy (ended by the window start).
        self.removed_running: set[int] = set()
        #: Reservations registered in this copy.
        self.present: set[int] = set()
        #: Statistics: allocations registered and freed while moving.
        self.moves = 0

    # -- counted holders -------------------------------------------------------

    def _holders_of(self, rank: int, info) -> tuple[dict, dict]:
        """The holder counts of *rank*, counted the first time an item on
        it moves: until then the copy shows the rank as it was made, held
        by the running jobs of that time, and once more by anything
        allocated that none of them names (it then never becomes free
        here)."""
        both = self._holders.get(rank)
        if both is not None:
            return both
        both = self._holders[rank] = ({}, {})
        running, started = self.planner.running, self._started
        for jobid in self.planner.by_rank.get(rank, ()):
            item = running.get(jobid)
            if item is None or jobid in started:
                continue
            for ids, counts in zip(item.ranks[rank], both, strict=True):
                for i in ids:
                    counts[i] = counts.get(i, 0) + 1
        unnamed = self._unnamed[rank] = (set(), set())
        for allocated, counts, extra in zip(
            (info["allocated_cores"], info["allocated_gpus"]),
            both,
            unnamed,
            strict=True,
        ):
            for i in allocated:
                if i not in counts:
                    counts[i] = 1
                    extra.add(i)
        return both

    def _shift(self, items, step: int) -> None:
        """Count *items* as holders (*step* 1) or no longer (-1): a core or
        GPU that gets its first holder is marked allocated in the copy, one
        that loses its last is marked free."""
        table, holders = self._table, self._holders
        touched = set()
        for item in items:
            for rank, sets in item.ranks.items():
                info = table.get(rank)
                if info is None:
                    continue
                touched.add(rank)
                both = holders.get(rank) or self._holders_of(rank, info)
                marks = (info["allocated_cores"], info["allocated_gpus"])
                for ids, counts, allocated in zip(sets, both, marks, strict=True):
                    for i in ids:
                        n = counts.get(i, 0) + step
                        if n:
                            counts[i] = n
                            if n == 1 and step == 1:
                                allocated.add(i)
                        else:
                            del counts[i]
                            allocated.discard(i)
        self._touched(touched)

    # -- presence ----------------------------------------------------------

    def _is_present(self, jobid: int) -> bool:
        planner = self.planner
        if jobid in planner.running:
            return jobid not in self.removed_running
        return jobid in self.present

    def _free(self, items) -> None:
        """Free *items* from the copy, then repair what they shared."""
        if not items:
            return
        if self._table is not None:
            self._shift(items, -1)
            self.moves += len(items)
            return
        pool = self.pool
        freed_ids = set()
        for item in items:
            pool.free(item.jobid)
            freed_ids.add(item.jobid)
        self.moves += len(items)
        by_rank = self.planner.by_rank
        lookup = self.planner.item
        repair = {}
        for item in items:
            for rank, (cores, gpus) in item.ranks.items():
                for other_id in by_rank.get(rank, ()):
                    if other_id in freed_ids or other_id in repair:
                        continue
                    if not self._is_present(other_id):
                        continue
                    other = lookup(other_id)
                    ocores, ogpus = other.ranks[rank]
                    if cores & ocores or gpus & ogpus:
                        repair[other_id] = other
        for other in repair.values():
            pool.register_alloc(other.jobid, other.R)
        self.moves += len(repair)

    def _register(self, items) -> None:
        if self._table is not None:
            if items:
                self._shift(items, 1)
                self.moves += len(items)
            return
        pool = self.pool
        for item in items:
            pool.register_alloc(item.jobid, item.R)
        self.moves += len(items)

    # -- moving ---------------------------------------------------------------

    def goto(self, t: float, tend: float, considered) -> None:
        """Make the copy show the window ``[t, tend)``.

        Args:
            t: window start (>= the pass's now).
            tend: window end (``math.inf`` for a job with no end).
            considered: predicate on a reservation item: whether this query
                respects it.
        """
        planner = self.planner
        if t > self.now:
            ended = planner.running_ended_by(t)
        else:
            ended = set()
        reserved = {
            item.jobid
            for item in planner.reservations_overlapping(t, tend)
            if considered(item)
        }
        running = planner.running
        reservations = planner.reservations
        to_free = [running[j] for j in ended - self.removed_running]
        to_free += [reservations[j] for j in self.present - reserved]
        to_add = [running[j] for j in self.removed_running - ended]
        to_add += [reservations[j] for j in reserved - self.present]
        self.removed_running = ended
        self.present = reserved
        self.t = t
        self._free(to_free)
        self._register(to_add)
        if self.check_windows and self._table is not None:
            self._check_window(tend, considered)

    def _check_window(self, tend: float, considered) -> None:
        """Fail unless the copy's rank table shows exactly what is busy in
        the window (tests: ``check_windows``)."""
        planner = self.planner
        expected: dict[int, tuple[set, set]] = {}
        items = [
            item
            for item in planner.running.values()
            if self.t <= planner.now or item.end > self.t
        ]
        items += [
            item
            for item in planner.reservations_overlapping(self.t, tend)
            if considered(item)
        ]
        for item in items:
            for rank, (cores, gpus) in item.ranks.items():
                busy = expected.setdefault(rank, (set(), set()))
                busy[0].update(cores)
                busy[1].update(gpus)
        for rank, info in self._table.items():
            want_c, want_g = expected.get(rank, (set(), set()))
            # Held by no running job when the copy was made: always shown.
            self._holders_of(rank, info)
            unnamed_c, unnamed_g = self._unnamed[rank]
            want_c, want_g = want_c | unnamed_c, want_g | unnamed_g
            assert info["allocated_cores"] == want_c, f"rank {rank}: cores differ"
            assert info["allocated_gpus"] == want_g, f"rank {rank}: GPUs differ"

    def alloc(self, jobid: int, request):
        """Allocate *request* in the current window (the pool's allocator)."""
        return self.pool.alloc(jobid, request)

    def unalloc(self, jobid: int) -> None:
        """Undo a probe :meth:`alloc` (it held only free resources)."""
        self.pool.free(jobid)

    def set_up(self, ranks, up: bool) -> None:
        """Mark *ranks* (up ranks of the pool) down, or up again, in the
        copy: the allocator then leaves them out.  On a counted copy the
        rank table's flags are set directly, as ``Rv1Pool.mark_down`` and
        ``mark_up`` set them, without writing and parsing an idset."""
        if self._table is None:
            ids = str(IDset(sorted(ranks)))
            (self.pool.mark_up if up else self.pool.mark_down)(ids)
            return
        table = self._table
        for rank in ranks:
            info = table.get(rank)
            if info is not None:
                info["up"] = up
        self._touched([rank for rank in ranks if rank in table])

    def _touched(self, ranks) -> None:
        """Count a change made directly in the copy's rank table to
        *ranks*: the pool's own bookkeeping of what changed where it has
        one (:meth:`~flux_sched_base.pool.Rv1SummaryPool.touched`), else
        its generation."""
        if isinstance(self._impl, Rv1SummaryPool):
            self._impl.touched(ranks)
        else:
            self._impl._bump()

    # -- keeping in step with the planner ------------------------------------------

    @property
    def follows_changes(self) -> bool:
        """Can the copy outlive the pass (it counts holders, so it can
        follow releases; see :meth:`released`)?"""
        return self._table is not None

    def released(self, item, ranks: set[int]) -> bool:
        """Running job *item* gives back its *ranks* (all of them, or some
        in a partial free), before the planner forgets them.  Returns False
        if the copy cannot follow (it must then be dropped)."""
        if self._table is None:
            return False
        if item.jobid in self.removed_running:
            if ranks >= item.ranks.keys():
                self.removed_running.discard(item.jobid)
            return True  # not shown in this window either way
        part = _Part({rank: item.ranks[rank] for rank in ranks if rank in item.ranks})
        self._shift([part], -1)
        self.moves += 1
        return True

    def running_added(self, item, allocated_here: bool) -> None:
        """A job started; *allocated_here* if its R was allocated in this copy."""
        self._started.add(item.jobid)
        if allocated_here and self._table is not None:
            # The allocator marked its cores taken; count it as a holder
            # like any other item instead.
            self.pool.free(item.jobid)
            allocated_here = False
        if self.t > self.now and item.end <= self.t:
            self.removed_running.add(item.jobid)
            if allocated_here:
                self._free([item])
        elif not allocated_here:
            self._register([item])

    def reservation_started(self, item) -> None:
        """A reservation became a running job with the same R (same jobid)."""
        self._started.add(item.jobid)
        if item.jobid in self.present:
            self.present.discard(item.jobid)
            if self.t > self.now and item.end <= self.t:
                self.removed_running.add(item.jobid)
                self._free([item])
        else:
            self.running_added(item, allocated_here=False)

    def reservation_dropped(self, item) -> None:
        """A reservation is about to leave the plan."""
        if item.jobid in self.present:
            self.present.discard(item.jobid)
            self._free([item])


class _Part:
    """Some ranks of a running job's allocation (a partial free)."""

    __slots__ = ("ranks",)

    def __init__(self, ranks: dict):
        self.ranks = ranks
