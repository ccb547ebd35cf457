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
a window ``[50, 150)``).  Freeing one of them from the pool would release
cores the other still holds, so every free is followed by a *repair* that
registers again the present items sharing resources with the freed one.
"""

from __future__ import annotations

import math

INF = math.inf


class Scratch:
    """One pool copy, moved between windows by :meth:`goto`.

    Args:
        planner: the :class:`~flux_sched_base.planner.Planner` whose items
            (running jobs, reservations) the windows are made of.
        now: the pass's current time; a window starting at *now* keeps every
            running job, even one past its planned end.
    """

    def __init__(self, planner, now: float):
        self.planner = planner
        self.pool = planner.pool.copy()
        self.now = now
        self.t = now
        #: Running jobs freed in this copy (ended by the window start).
        self.removed_running: set[int] = set()
        #: Reservations registered in this copy.
        self.present: set[int] = set()
        #: Statistics: allocations registered and freed while moving.
        self.moves = 0

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

    def alloc(self, jobid: int, request):
        """Allocate *request* in the current window (the pool's allocator)."""
        return self.pool.alloc(jobid, request)

    def unalloc(self, jobid: int) -> None:
        """Undo a probe :meth:`alloc` (it held only free resources)."""
        self.pool.free(jobid)

    # -- keeping in step with the planner ------------------------------------------

    def running_added(self, item, allocated_here: bool) -> None:
        """A job started; *allocated_here* if its R was allocated in this copy."""
        if self.t > self.now and item.end <= self.t:
            self.removed_running.add(item.jobid)
            if allocated_here:
                self._free([item])
        elif not allocated_here:
            self._register([item])

    def reservation_started(self, item) -> None:
        """A reservation became a running job with the same R (same jobid)."""
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
