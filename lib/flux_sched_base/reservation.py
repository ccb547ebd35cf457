"""Backfilling on reservations: EASY, conservative and everything between.

:class:`ReservationScheduler` walks the queue in priority order.  The first
``reservation_depth`` jobs that cannot start at once each hold a
reservation; every later job may start now only if it delays none of them.
Depth 1 is EASY backfilling (Mu'alem and Feitelson, 2001): one reservation,
for the head of the queue, and a later job may start if it fits now and
either ends before the reservation starts or uses only resources the
reservation does not need; both clauses fall out of one question ("does it
fit during ``[now, now + duration)`` around the reservation?").  Unlimited
depth is conservative backfilling: every queued job holds a reservation.

A reservation promises a start time and an amount of resources; which
resources a job gets is decided when it starts.  A pass plans in one of
two ways:

- **counts** (:meth:`ReservationScheduler.plan_counted`), when every
  pending job takes whole nodes (single-core nodes, whole-node and
  exclusive jobs), or every one is one-core slots that any free cores
  satisfy (``flux run -n N``; :mod:`flux_sched_base.counts`).  Which
  resources a job gets then matters to no one, so a reservation is a
  start time and a count, and the pass is exactly the textbook definition: EASY and hybrids
  place their reservations afresh on every pass, conservative keeps them
  and compresses them in queue order.
- **the allocator** (:meth:`ReservationScheduler.plan_ranked`), for any
  other queue (core-level jobs on multi-core nodes, GPUs, constraints):
  a reservation also carries the R the allocator found for it, on the
  ranks that become free last (so the others stay free for backfilling),
  and the job starts on that R.  Reservations are kept from pass to pass;
  for a job holding one, a pass

  1. starts it on its reserved R if its start time has come;
  2. if the plan got lighter since the job last looked (a job ended early,
     a reservation was dropped or moved earlier, resources came up, an
     expiration was shortened), starts it now if it fits around every
     other reservation, or moves its reservation earlier (compression),
     giving the earlier start to an identical job ahead of it if one waits
     for a later one;
  3. otherwise keeps the reservation if it is still free of conflicts;
  4. otherwise places it again, respecting only the reservations of
     higher-priority jobs.

Conservative reservations, and the head's at any depth, move later only
because a higher-priority job arrived (or rose in priority), a running
job's expiration was extended, or resources went down (or a running job
overran its end); a job without a reservation is placed respecting only
higher-priority jobs' reservations, so a new high-priority job can push
lower ones later, and a new low-priority job never delays anyone.  (A
hybrid planned with counts places its reservations afresh, as the
definition does: a later one may give way to one ahead that moved
earlier.)  When a queue changes from one kind
to the other, the reservations carry over (as counts, or placed on ranks
at the same times).
"""

from __future__ import annotations

import functools
import heapq
import math
import time

from flux.resource import InfeasibleRequest

from flux_sched_base.annotations import (
    BACKFILLED,
    IMMEDIATE,
    REASON_NO_ESTIMATE,
    RESERVED,
)
from flux_sched_base.args import format_value
from flux_sched_base.availability import contains
from flux_sched_base.counted import CountedPlanning
from flux_sched_base.scheduler import PlanningScheduler, _shape, queue_order
from flux_sched_base.sparse_passes import SparsePasses

INF = math.inf


class ReservationScheduler(SparsePasses, CountedPlanning, PlanningScheduler):
    """A :class:`PlanningScheduler` whose pass keeps up to
    :attr:`reservation_depth` reservations and backfills around them."""

    #: How many queued jobs hold a reservation: 1 is EASY, ``math.inf`` is
    #: conservative backfilling.
    reservation_depth: float = 1

    #: Set by a pass that ran to its end with every reservation it may
    #: hold taken: ``(queue key of the last job taken in order, the plan's
    #: first change)`` (see :meth:`arrival_is_quiet`).
    _quiet: tuple | None = None

    def arrival_is_quiet(self, job, now: float) -> bool:
        """A pass would leave *job* waiting and change nothing if the last
        one took :attr:`reservation_depth` holders all ahead of *job*
        (*job* holds none), another job of the same request behind them
        waits (the backfill scan of that pass tried one of the two
        identical requests and found it could not start), and nothing in
        the plan has changed by itself since (*now* before its first
        planned change: the search for room now is then over the same free
        resources, for a window no shorter)."""
        quiet = self._quiet
        if quiet is None or not now < quiet[1]:
            return False
        if not queue_order(job) > quiet[0]:
            return False
        key = self._bucket_of[job.jobid]
        if key[0] == "unique":
            return False
        bucket = self._buckets[key]
        return len(bucket) - bucket.bisect_key_right(quiet[0]) >= 2

    def _settled(self, cutoff, unit: str | None) -> None:
        """Record that the pass in progress, which planned with counts of
        *unit* (None: with the allocator), reached its end (see
        :attr:`_quiet`).  Unless the queue left is still of that kind: the
        next pass plans the other way, and turns reservations into promises
        or back."""
        if self.count_unit() == unit:
            self._quiet = (cutoff, self.planner.first_planned_change())

    def stats_get(self):
        """Adds ``reservation_depth`` and ``reservation_moves`` (jobs
        started or placed again earlier than the reservation they held:
        the work compression does) to the planner statistics."""
        stats = super().stats_get()
        stats["reservation_depth"] = format_value(self.reservation_depth)
        stats["reservation_moves"] = self._moves
        stats["sparse_passes"] = self._sparse_passes
        stats["arrival_passes"] = self._arrival_passes
        return stats

    def plan(self):
        """One pass: reservations for the first jobs, then backfill.

        When every pending job takes whole nodes, the pass plans with node
        counts (:meth:`plan_counted`); otherwise with the pool's allocator
        (:meth:`plan_ranked`).
        """
        if self.counted_queue():
            self._ledger = None  # the ranked passes' record stops here
            return self.plan_counted()
        return self.plan_ranked()

    # -- any queue: ranks chosen by the allocator --------------------------------------

    def plan_ranked(self):
        """A pass that plans with the pool's allocator (see the module doc)."""
        planner = self.planner
        planner.begin_pass(time.time())
        self._quiet = None
        ledger = self._usable_ledger()
        # What counted passes learnt of where the plan got lighter does not
        # survive a pass that plans ranks.
        self.next_pass_serial()
        if planner.promises:
            self._place_promises()
            planner.begin_pass(planner.now)
        self._lightened: dict = {}  # per pass: (from, to) epochs -> ranks
        self._starts_cache: dict = {}
        self._room_from: dict = {}  # per pass: see _may_have_room
        if ledger is not None:
            yield from self._sparse_walk(ledger)
            return
        event = self._event
        marks: list = []  # see HolderLedger.marks
        revisit: set[int] = set()  # see HolderLedger.revisit
        depth = self.reservation_depth
        holders: set[int] = set()
        waiting = False
        cutoff = None
        for job in self.pending_jobs():
            if len(holders) >= depth:
                break
            cutoff = queue_order(job)
            probes = planner.probes
            held = planner.reservations.get(job.jobid)
            epoch = planner.lighten_epoch
            if self._hold(job, waiting):
                holders.add(job.jobid)
                waiting = True
            if planner.lighten_epoch != epoch:
                marks.append((epoch, planner.lighten_epoch, cutoff))
            if depth == INF:
                self._clashes(job.jobid, held, cutoff, revisit)
            handed = self.__dict__.pop("_handed_start", None)
            if handed is not None:
                # A holder ahead took this job's start now (_give_ahead):
                # it no longer holds one, and the next job may.
                holders.discard(handed)
            # A holder that kept its reservation without asking the
            # allocator is a cheap step (most of them, on a long queue).
            if (
                planner.probes != probes
                or planner.reservations.get(job.jobid) is not held
                or self._started_in_step
                or self.cheap_yield()
            ):
                yield
        if self.check_reuse:
            assert holders <= self._pending.keys(), "a job counted as a holder started"
        self._end_holder_phase(holders)
        if len(holders) >= depth:
            yield from self._backfill_phase(cutoff)
            self._settled(cutoff, None)
        else:
            self._keep_ledger(event, marks, revisit)

    def _place_promises(self) -> None:
        """Turn the count-based reservations of a pass that planned with
        counts into reservations on ranks, at the same start times.

        They are placed in order of start time with the allocator, which
        always succeeds for whole-node jobs whose counts fit; a job that
        cannot be placed at its time just holds nothing and is placed
        again by the pass.
        """
        planner = self.planner
        now = planner.now
        order = sorted(
            (start, queue_order(self._pending[jobid]), jobid)
            for jobid, (start, _, _) in planner.promises.items()
            if jobid in self._pending and start > now
        )
        planner.promises.clear()
        for start, _, jobid in order:
            rr = self._pending[jobid].resource_request
            try:
                found = planner.earliest(
                    jobid,
                    rr,
                    floor=start,
                    limit=math.nextafter(start, INF),
                    prefer_late=True,
                )
            except InfeasibleRequest:
                continue
            if found is not None:
                item = planner.reserve(
                    jobid, start, planner.window_end(start, rr.duration), found[1]
                )
                item.checked = -1  # look for an earlier start at once

    # -- the holder phase ----------------------------------------------------------

    def _hold(self, job, waiting: bool) -> bool:
        """Give *job* its start or its reservation; True if it must wait."""
        planner = self.planner
        jobid, rr = job.jobid, job.resource_request
        now = planner.now
        planner.settle(jobid)
        res = planner.reservations.get(jobid)
        had_reservation = res is not None
        try:
            if res is not None:
                if res.start <= now:
                    R = planner.start_reserved(jobid, rr.duration)
                    if R is not None:
                        self.start(job, R, RESERVED)
                        return False
                if res.checked < planner.lighten_epoch:
                    found = self._compress(job, res)
                    if found is not None:
                        self._count_move((res.start,), found[0])
                        if self._give_ahead(job, *found):
                            return True
                        if found[0] <= now:
                            self.start(job, found[1], RESERVED)
                            return False
                        self._reserve(job, *found)
                        return True
                if planner.still_valid(res):
                    self._estimate(job, res.start)
                    return True
                planner.drop(jobid)
            R = planner.start_now(jobid, rr, exclude_held=True)
            if R is not None:
                if had_reservation:
                    selection = RESERVED
                    self._count_move((res.start,), now)
                else:
                    selection = BACKFILLED if waiting else IMMEDIATE
                self.start(job, R, selection)
                return False
            found = planner.earliest(
                jobid,
                rr,
                floor=now,
                include_floor=False,
                exclude_held=True,
                prefer_late=True,
            )
        except InfeasibleRequest as exc:
            self.deny(job, exc)
            return False
        if found is None:
            self.annotations.update(
                job, t_estimate=None, reason_pending=REASON_NO_ESTIMATE
            )
        else:
            if had_reservation:
                self._count_move((res.start,), found[0])
            self._reserve(job, *found)
        return True

    def _compress(self, job, res):
        """Look for an earlier start for a job holding reservation *res*.

        Only resources that got lighter since the job last looked can make
        an earlier start possible, so the search is limited to start times
        at which one of those ranks could host part of the job.  Returns
        ``(now, R)`` if the job fits now (the planner has allocated *R* to
        it; the caller answers SUCCESS), ``(t, R)`` for an earlier
        reservation, or None.
        """
        planner = self.planner
        jobid, rr = job.jobid, job.resource_request
        now = planner.now
        checked = res.checked
        res.checked = planner.lighten_epoch
        span = (checked, planner.lighten_epoch)
        lightened = self._lightened.get(span, False)
        if lightened is False:
            lightened = self._lightened[span] = planner.lightened_since(checked)
        within = None
        if lightened is not None:
            lightened = self._may_have_room(job, res, span, lightened)
            if not lightened:
                return None
        if lightened is not None and planner.one_rank(rr):
            # Most holders find no room before their start on any lightened
            # rank: a few comparisons per rank say so without a search.
            lightened = planner.ranks_with_room(jobid, rr, lightened, now, res.start)
            if not lightened:
                return None
            # Searched rank by rank: those ranks alone, now first.
            search = functools.partial(
                planner.earliest,
                jobid,
                rr,
                floor=now,
                limit=res.start,
                ranks=lightened,
                prefer_late=True,
            )
            # A start now is the job's own allocation in the pool (below):
            # no R from the copy for it.
            found = search(bare_now=True)
            if found is None or found[0] > now:
                return found
            R = planner.start_now(jobid, rr, counts_checked=True)
            return (now, R) if R is not None else search(include_floor=False)
        if lightened is not None:
            within = self._lightened_starts(job, res, checked, lightened)
            if within is not None:
                within = [(u, v) for u, v in within if u < res.start]
                if not within:
                    return None
        if within is None or contains(within, now):
            R = planner.start_now(jobid, rr)
            if R is not None:
                return now, R
        return planner.earliest(
            jobid,
            rr,
            floor=now,
            include_floor=False,
            limit=res.start,
            within=within,
            prefer_late=True,
        )

    def _may_have_room(self, job, res, span, lightened: set[int]) -> set[int]:
        """Of the *lightened* ranks, those that may have room for *job*
        before its reservation *res* starts: all of them, or (cheaply, for
        a one-rank request) none but the one its reservation is on, or none.

        The earliest room on the ranks (:meth:`Planner.first_room`, every
        reservation counted, the job's own too) is kept per pass, request
        and *span* of lightenings: holders of one request that last looked
        at the same time ask the same.  What the pass places since only
        delays that room, and what it frees opens a new span, so a kept
        time still bounds it from below.  The rank of the job's own
        reservation is left to the search, which leaves that out.
        """
        key = self._bucket_of.get(job.jobid)
        if key is None or key[0] == "unique":
            return lightened
        checked, epoch = span
        memo = self._room_from
        # The widest span asked of this request since the last lightening
        # covers every narrower one: its earliest room is no later.
        wide = memo.get((key, epoch))
        if wide is None or wide[0] > checked or wide[1] < res.start:
            planner = self.planner
            first = planner.first_room(job.resource_request, lightened, planner.now)
            if first is None:
                first = -INF  # not searched rank by rank: never says no
            if wide is None or wide[0] >= checked:
                memo[key, epoch] = (checked, first)
            if first < res.start:
                return lightened
        own = lightened.intersection(res.ranks)
        if self.check_reuse:
            planner = self.planner
            assert not planner.ranks_with_room(
                job.jobid, job.resource_request, lightened - own, planner.now, res.start
            ), f"job {job.jobid} has room before {res.start} on a lightened rank"
        return own

    def _give_ahead(self, job, start: float, R) -> bool:
        """Let an identical job ahead of *job* take the earlier start it found.

        Reservations are pinned to ranks, so when resources free early a
        job can find an earlier start on the ranks an identical job ahead
        of it could not use, because they were its own reservation's.  The
        first identical job ahead that waits for a later start takes the
        new one (*start*, *R*; if *start* is now, *job* has just been
        allocated *R* and the allocation is handed over), and *job* takes
        that job's reservation: the two never conflict, since *job*'s
        search respected it.  Returns True if they swapped.
        """
        planner = self.planner
        key = self._bucket_of.get(job.jobid)
        bucket = self._buckets.get(key) if key and key[0] != "unique" else None
        if bucket is None:
            return False
        ahead = None
        for other in bucket.irange_key(
            max_key=queue_order(job), inclusive=(True, False), reverse=True
        ):
            res = planner.reservations.get(other.jobid)
            if res is None:
                continue
            if res.start <= start:
                break
            ahead = other
        if ahead is None:
            return False
        theirs = planner.drop(ahead.jobid, lighten=False)
        if start <= planner.now:
            R = planner.transfer(job.jobid, ahead.jobid)
            self.start(ahead, R, RESERVED)
            self._handed_start = ahead.jobid
        else:
            self._reserve(ahead, start, R)
        self._reserve(job, theirs.start, theirs.R)
        # That reservation was placed around the plan as it was when
        # *ahead* last looked: what got lighter since (*job*'s old
        # reservation, the swap itself) is still to be looked at, or the
        # job may wait for a start no event comes back to.
        planner.reservations[job.jobid].checked = theirs.checked
        return True

    def _lightened_starts(self, job, res, checked: int, lightened: set[int]):
        """Start times at which a lightened rank could host part of *job*.

        Identical requests get the same answer while nothing on those ranks
        changes, unless a job's own reservation is on one of them: the
        answer is cached per pass for the others.
        """
        planner = self.planner
        key = None
        if lightened.isdisjoint(res.ranks):
            key = (
                self._bucket_of.get(job.jobid),
                checked,
                planner.lighten_epoch,
                planner.ranks_version(sorted(lightened)),
            )
            if key in self._starts_cache:
                return self._starts_cache[key]
        starts = planner.starts(
            job.jobid,
            job.resource_request,
            floor=planner.now,
            ranks=lightened,
            needed=1,
        )
        if key is not None:
            self._starts_cache[key] = starts
        return starts

    def _reserve(self, job, start: float, R) -> None:
        planner = self.planner
        end = planner.window_end(start, job.resource_request.duration)
        planner.reserve(job.jobid, start, end, R)
        self._estimate(job, start)

    def _end_holder_phase(self, holders: set[int]) -> None:
        """Drop reservations and clear annotations of jobs no longer holding."""
        planner = self.planner
        for jobid in list(planner.held_ids):
            planner.drop(jobid)
        for jobid in self.annotations.annotated():
            if jobid not in holders:
                job = self._pending.get(jobid)
                if job is not None:
                    self.annotations.clear(job)

    # -- the backfill phase ---------------------------------------------------------

    def _backfill_phase(self, cutoff):
        """Start, in priority order, the jobs after *cutoff* that fit now
        without delaying a reservation.

        Jobs with identical requests fit or not alike, so the scan walks
        one job per group of identical requests (a heap of group heads in
        priority order): its cost grows with the number of distinct
        requests, not with the length of the queue.
        """
        failed: dict = {}
        heap = [
            (queue_order(job), n, key, job)
            for n, (key, job) in enumerate(self.identical_groups(cutoff))
        ]
        heapq.heapify(heap)
        serial = len(heap)
        while heap:
            if self._nothing_fits():
                return
            order, _, key, job = heapq.heappop(heap)
            outcome = self._backfill(job, failed)
            if outcome:
                following = self.next_identical(key, order)
                if following is not None:
                    serial += 1
                    heapq.heappush(
                        heap, (queue_order(following), serial, key, following)
                    )
                yield
            elif outcome is False:
                yield
            elif self.cheap_yield():
                yield

    def _nothing_fits(self) -> bool:
        free = self.planner.profile.free_now_upper()
        least = self.min_need()
        return least is None or free[0] < least or free[2] < 1

    def _backfill(self, job, failed: dict) -> bool | None:
        """Start *job* now if it delays no reservation.

        Returns True if it started (or was denied), False if the allocator
        said no, None if cheap checks ruled it out.  A job started here
        passes a waiting reservation holder: ``backfilled``.
        """
        planner = self.planner
        rr = job.resource_request
        shape = _shape(rr)
        duration = rr.duration if rr.duration > 0.0 else INF
        if shape in failed and failed[shape] <= duration:
            # The same shape failed with a window no longer than this one,
            # and starting jobs since only took resources away.
            return None
        if not planner.fits_counts_now(rr, self.need(job)):
            if shape is not None:
                failed[shape] = min(failed.get(shape, INF), duration)
            return None
        try:
            R = planner.start_now(job.jobid, rr, counts_checked=True)
        except InfeasibleRequest as exc:
            self.deny(job, exc)
            return True
        if R is None:
            if shape is not None:
                failed[shape] = min(failed.get(shape, INF), duration)
            return False
        self.start(job, R, BACKFILLED)
        return True
