"""Unlimited-depth passes that reach only some holders.

A ranked pass of :class:`~flux_sched_base.reservation.ReservationScheduler`
at unlimited depth walks every pending job, yet on a long queue most of
them keep their reservation as it is.  :class:`SparsePasses` lets a pass
reach, in queue order, only the jobs a pass over every holder would
change, from what the last pass recorded (:class:`HolderLedger`); the
others stay as they are.  See "Passes that reach only some holders" in
``docs/schedulers.rst``.
"""

from __future__ import annotations

import bisect
import functools
import heapq
import math
from dataclasses import dataclass

from flux_sched_base.annotations import REASON_RESOURCES
from flux_sched_base.scheduler import queue_order

INF = math.inf


@dataclass
class HolderLedger:
    """What a ranked pass of unlimited depth that reached every pending job,
    with no event during it, leaves for the next pass, so that the next
    one may reach only the jobs something reached since.

    A holder a pass does not reach keeps its reservation as it was: so it
    would in a pass over every holder unless its start has come, the
    reservation was placed around the jobs ahead only and clashes, its
    ``t_estimate`` is not its start, or the plan got lighter where it could
    start earlier (a rank of its reservation, or ranks whose earliest room
    for its request comes before its start).  A lightening made while the
    pass reached a job is seen by the holders behind it in the same pass,
    and by the ones up to it in the next (*marks*).
    """

    plan_event: int  #: the scheduler's plan events then
    frees: int  #: and its frees
    epoch: int  #: the planner's lighten epoch then
    #: ``(first epoch, end epoch, queue key)``: the lightenings made while
    #: the pass reached the job of that key
    marks: list
    last_key: tuple  #: queue key of the last pending job
    pending: int  #: how many jobs were pending
    unreserved: set  #: pending jobs holding no reservation
    #: holders whose ranks something the pass reached after them took
    revisit: set


class SparsePasses:
    """The part of :class:`~flux_sched_base.reservation.ReservationScheduler`
    that keeps a :class:`HolderLedger` and runs the passes that use it
    (a mixin: it relies on the scheduler's queue, planner and ``_hold``)."""

    #: See :class:`HolderLedger` (unlimited depth).
    _ledger: HolderLedger | None = None
    _sparse_passes = 0

    def _keep_ledger(self, event: int, marks: list, revisit: set) -> None:
        """Record, for the next pass, what a ranked pass that reached every
        pending job (unlimited depth) left (see :class:`HolderLedger`);
        nothing if an event came during it."""
        self._ledger = None
        if self._event != event or not self._queue:
            return
        planner = self.planner
        self._ledger = HolderLedger(
            plan_event=self.plan_event,
            frees=self.frees,
            epoch=planner.lighten_epoch,
            marks=marks,
            last_key=queue_order(self._queue[-1]),
            pending=len(self._queue),
            unreserved=self._pending.keys() - planner.reservations.keys(),
            revisit=revisit,
        )

    def _usable_ledger(self):
        """The last pass's :class:`HolderLedger`, if this pass may reach
        only the holders something reached since (and clear it): only
        frees and arrivals at the back of the queue came since, the
        lightenings it names are still in the planner's log, few distinct
        requests are queued, and no count-based promise waits."""
        ledger, self._ledger = self._ledger, None
        if ledger is None or self.reservation_depth != INF:
            return None
        planner = self.planner
        if (
            self.plan_event - ledger.plan_event != self.frees - ledger.frees
            or planner.promises
            or len(self._buckets) > self.SPARSE_MAX_REQUESTS
            or self._queue.bisect_key_right(ledger.last_key) != ledger.pending
        ):
            return None
        first = ledger.marks[0][0] if ledger.marks else ledger.epoch
        if first < planner.lighten_epoch and planner.lightened_at(first) is None:
            return None
        return ledger

    #: Above this many distinct requests queued, every pass reaches every
    #: holder (:meth:`_reach` asks each request of each lightening).
    SPARSE_MAX_REQUESTS = 16

    def _reach(self, epoch: int, add, low=None, high=None) -> None:
        """*add* the holders (queue key above *low*, at most *high*) that
        the lightening from *epoch* may let start earlier: those with a
        reservation on one of its ranks, and those whose reservation starts
        after the earliest room its ranks offer their request
        (:meth:`Planner.first_room`, a lower bound through the pass)."""
        planner = self.planner
        ranks = planner.lightened_at(epoch)
        if ranks is None:  # not in the log any more: every holder
            ranks, firsts, least = (), None, -INF
        else:
            firsts = {}
            least = INF
            now = planner.now
            for key, bucket in self._buckets.items():
                first = None
                if key[0] != "unique":
                    first = planner.first_room(bucket[0].resource_request, ranks, now)
                firsts[key] = -INF if first is None else first
                least = min(least, firsts[key])
        reserved_on = planner.reserved_on
        bucket_of = self._bucket_of
        for rank in ranks:
            for jobid in reserved_on.get(rank, ()):
                add(jobid, low, high)
        if least == INF:
            return
        for start, jobid in planner.reserved_after(least):
            if firsts is None or start > firsts[bucket_of[jobid]]:
                add(jobid, low, high)

    def _sparse_walk(self, ledger):
        """The holder phase of unlimited depth, reaching in queue order only
        the jobs a pass over every holder would change (see
        :class:`HolderLedger`).

        With ``check_reuse`` (tests) every other pending job is reached as
        well, and the pass fails if that changes its reservation, sends
        anything, or starts or denies a job.
        """
        planner = self.planner
        now = planner.now
        pending = self._pending
        queue = self._queue
        heap: list = []
        queued: set[int] = set()

        def add(jobid, low=None, high=None):
            job = pending.get(jobid)
            if job is None or jobid in queued:
                return
            key = queue_order(job)
            if (low is None or key > low) and (high is None or key <= high):
                queued.add(jobid)
                heapq.heappush(heap, (key, jobid))

        for job in queue.irange_key(min_key=ledger.last_key, inclusive=(False, False)):
            add(job.jobid)  # arrivals
        for jobid in ledger.unreserved:
            add(jobid)
        for jobid in ledger.revisit:
            add(jobid)
        for _, jobid in planner.reserved_by(now):
            add(jobid)
        unshown = self._unshown
        for jobid, due in list(unshown.items()):
            if jobid not in pending:
                del unshown[jobid]  # finished
            elif due <= now:
                add(jobid)
        for first, last, key in ledger.marks:
            for epoch in range(first, last):
                self._reach(epoch, add, high=key)
        for epoch in range(ledger.epoch, planner.lighten_epoch):
            self._reach(epoch, add)
        self._sparse_passes += 1
        event = self._event
        marks: list = []
        revisit: set[int] = set()
        settled = None  # the queue key up to which every job is settled
        mark_keys = [key for _, _, key in ledger.marks]
        for job, reached in self._sparse_order(heap, queued):
            jobid, key = job.jobid, queue_order(job)
            res = planner.reservations.get(jobid)
            if res is not None:
                # What the job has looked at: all but the lightenings made
                # in the last pass from when that pass reached it.
                i = bisect.bisect_left(mark_keys, key)
                seen = ledger.marks[i][0] if i < len(mark_keys) else ledger.epoch
                if res.checked < seen:
                    res.checked = seen
            if not reached:
                self._assert_kept(job, res)
                continue
            if res is None or res.start <= now or not planner.still_valid(res):
                # The questions _hold may ask respect only the jobs ahead.
                if key > ledger.last_key:
                    planner.settle_all()
                else:
                    for ahead in queue.irange_key(
                        min_key=settled, max_key=key, inclusive=(False, False)
                    ):
                        planner.settle(ahead.jobid)
                settled = key if settled is None else max(settled, key)
            probes, epoch = planner.probes, planner.lighten_epoch
            self._hold(job, queue.bisect_key_left(key) > 0)
            self.__dict__.pop("_handed_start", None)
            after = planner.reservations.get(jobid)
            if planner.lighten_epoch != epoch:
                marks.append((epoch, planner.lighten_epoch, key))
                for e in range(epoch, planner.lighten_epoch):
                    self._reach(e, add, low=key)
            self._clashes(jobid, res, key, revisit, add)
            if (
                planner.probes != probes
                or after is not res
                or self._started_in_step
                or self.cheap_yield()
            ):
                yield
        self._keep_ledger(event, marks, revisit)

    def _clashes(self, jobid: int, before, key, revisit: set, add=None) -> None:
        """After the pass reached *jobid* (queue key *key*, reservation
        *before* then): if it now holds something else (a new reservation,
        or it started), that may clash with the reservations that hold the
        same cores or GPUs at the same time (it was placed around the jobs
        ahead only, or started late and runs past its reservation's end).
        The holders behind it are *add*-ed to this pass, those ahead to
        *revisit* in the next."""
        planner = self.planner
        item = planner.reservations.get(jobid)
        if item is before and jobid in self._pending:
            return
        if item is None:
            item = planner.running.get(jobid)
            if item is None:
                return
        pending = self._pending
        reservations = planner.reservations
        start = -INF if item.start is None else item.start
        for rank, (cores, gpus) in item.ranks.items():
            for other in planner.reserved_on.get(rank, ()):
                theirs = reservations[other]
                if other == jobid or not (
                    theirs.start < item.end and start < theirs.end
                ):
                    continue
                their_cores, their_gpus = theirs.ranks[rank]
                if not (cores & their_cores or gpus & their_gpus):
                    continue
                if queue_order(pending[other]) < key:
                    revisit.add(other)
                elif add is not None:
                    add(other, low=key)

    def _sparse_order(self, heap: list, queued: set):
        """``(job, reached)`` in queue order: the jobs in *heap* (reached),
        and with ``check_reuse`` every other pending job between them."""
        pending = self._pending
        if not self.check_reuse:
            while heap:
                _, jobid = heapq.heappop(heap)
                job = pending.get(jobid)
                if job is not None:
                    yield job, True
            return
        queue = self._queue
        key = None
        while True:
            # Read afresh each time: the pass changes the queue as it goes.
            if key is None:
                job = queue[0] if queue else None
            else:
                job = next(
                    queue.irange_key(min_key=key, inclusive=(False, False)), None
                )
            if job is None:
                return
            key = queue_order(job)
            while heap and heap[0][0] <= key:
                heapq.heappop(heap)
            yield job, job.jobid in queued

    def _assert_kept(self, job, res) -> None:
        """Fail if a pass over every holder would change *job*'s
        reservation *res* or annotations, or start or deny it (tests)."""
        planner = self.planner
        before = (
            self._jobs_started,
            self._jobs_denied,
            self.annotations.updates,
            None if res is None else (res.start, res.R),
        )
        assert self._hold(job, True), f"job {job.jobid} not reached, but it left"
        after = planner.reservations.get(job.jobid)
        assert after is res and before == (
            self._jobs_started,
            self._jobs_denied,
            self.annotations.updates,
            None if res is None else (res.start, res.R),
        ), f"job {job.jobid} not reached, but a pass over it changed it"

    @functools.cached_property
    def _unshown(self) -> dict[int, float]:
        """Jobs whose ``t_estimate`` sent stands for their reservation's
        start only until some time (the share of the wait), by that time
        (see :meth:`_estimate`)."""
        return {}

    def _estimate(self, job, start: float) -> None:
        annotations = self.annotations
        # The usual case, a holder kept as it was: what was sent stands.
        due = annotations.standing(job.jobid, start, self.planner.now, REASON_RESOURCES)
        if due is None:
            super()._estimate(job, start)
            due = annotations.stands_until(job.jobid, start, REASON_RESOURCES)
        # A pass that reaches only some holders reaches these when the
        # estimate sent may no longer stand (see _sparse_walk).
        if due == INF:
            self._unshown.pop(job.jobid, None)
        else:
            self._unshown[job.jobid] = due
