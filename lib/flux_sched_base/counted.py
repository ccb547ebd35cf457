"""Passes that plan a queue with counts of whole nodes or cores.

When every pending job takes whole nodes (:func:`flux_sched_base.counts.
whole_nodes`), or every one is one-core slots that any free cores satisfy
(:func:`flux_sched_base.counts.core_count`), which resources a job gets
matters to no one else: a pass can plan with the number of free units over
time alone (:class:`~flux_sched_base.counts.NodeProfile`), and a
reservation is a start time and a count, the ranks chosen by the allocator
when the job starts.  This is the model of the textbook definitions of EASY and
conservative backfilling, and :class:`CountedPlanning` follows them to the
letter.  :class:`~flux_sched_base.reservation.ReservationScheduler` uses
it for such queues.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import math
import time

from flux.resource import InfeasibleRequest

from flux_sched_base.annotations import (
    BACKFILLED,
    IMMEDIATE,
    REASON_NO_ESTIMATE,
    REASON_RESOURCES,
    RESERVED,
)
from flux_sched_base.arrival_passes import ArrivalPasses
from flux_sched_base.compression import Carried, KeptSearches, Lightening
from flux_sched_base.scheduler import queue_order

INF = math.inf


class _Frontier:
    """Requests that did not fit now, as a staircase of ``(nodes, end)``:
    a request needing at least as many nodes until at least as late does
    not fit either, while the plan only gets heavier."""

    def __init__(self):
        self.nodes: list[int] = []  # increasing
        self.ends: list[float] = []  # decreasing

    def covers(self, nodes: int, end: float) -> bool:
        i = bisect.bisect_right(self.nodes, nodes) - 1
        return i >= 0 and self.ends[i] <= end

    def add(self, nodes: int, end: float) -> None:
        if self.covers(nodes, end):
            return
        i = bisect.bisect_left(self.nodes, nodes)
        # Drop the steps the new one makes redundant (more nodes, later end).
        k = i
        while k < len(self.nodes) and self.ends[k] >= end:
            k += 1
        self.nodes[i:k] = [nodes]
        self.ends[i:k] = [end]


class CountedPlanning(ArrivalPasses):
    """The node-count pass of :class:`~flux_sched_base.reservation.
    ReservationScheduler` (a mixin: it uses the scheduler's planner, queue,
    annotations and :attr:`reservation_depth`)."""

    #: The holders of the pass in progress that found no earlier start
    #: (see :meth:`_keeps`).
    _kept_searches: KeptSearches | None = None

    #: Jobs started, or placed again, earlier than the reservation they held
    #: from the pass before, planned with counts or on ranks:
    #: ``reservation_moves`` in ``stats-get`` (the work compression does).
    _moves = 0

    def next_pass_serial(self) -> int:
        """Number a pass that plans reservations (counted or ranked), so a
        pass can tell whether what it inherits comes from the one just
        before it."""
        self._pass_serial = getattr(self, "_pass_serial", 0) + 1
        return self._pass_serial

    def plan_counted(self):
        """A pass over a queue planned with counts (whole nodes or cores).

        Jobs are taken in queue order against a profile of whole free nodes
        (:class:`~flux_sched_base.counts.NodeProfile`) that holds the
        running jobs and, as the pass goes, every start and reservation it
        makes.  A job that fits now, for its whole time limit, starts now
        (on any free nodes: nothing else depends on which); otherwise,
        while fewer than :attr:`reservation_depth` jobs hold one, it gets
        the earliest reservation that fits: a start time and a count.

        With a finite depth (EASY, hybrids) reservations are placed afresh
        on every pass.  With unlimited depth (conservative) they are kept
        from pass to pass and *compressed* (Mu'alem and Feitelson): the
        profile also holds every reservation of a job the pass has not
        reached yet; in queue order each holder gives up its own and takes
        the earliest that fits around all the others, so it never moves
        later, while a job without one (a new job) is placed around the
        jobs ahead of it only.  These are the textbook definitions
        (:mod:`conformance.policy.textbook` in this project).
        """
        if self.reservation_depth == INF:
            return self._compress_counted()
        return self._fresh_counted()

    def _fresh_counted(self):
        """:meth:`plan_counted` for a finite depth: reservations afresh.

        Jobs are taken in queue order until :attr:`reservation_depth` of
        them hold a reservation; the jobs behind start now if they fit
        around those (:meth:`_backfill_counted`).
        """
        planner = self.planner
        planner.begin_pass(time.time())
        self._quiet = None
        unit = self.count_unit()
        now = planner.now
        depth = self.reservation_depth
        for jobid in list(planner.reservations):
            planner.drop(jobid, lighten=False)  # left by a pass that planned ranks
        before = dict(planner.promises)  # the last pass's, for reservation_moves
        planner.promises.clear()
        profile = None  # built when the first job does not fit now
        holders: set[int] = set()
        keep: set[int] = set()  # annotated: holders and jobs with no estimate
        waiting = False
        cutoff = None  # queue key of the last job taken in order
        jobs = self.pending_jobs()
        for job in jobs:
            if len(holders) >= depth:
                if profile is None:
                    profile = self.count_profile()
                rest = itertools.chain((job,), jobs)
                yield from self._backfill_counted(profile, rest, cutoff, waiting)
                self._clear_others(keep)
                self._settled(cutoff, unit)
                return
            cutoff = queue_order(job)
            if profile is None:
                if self._start_before_planning(job, waiting, before.get(job.jobid)):
                    yield
                    continue
                profile = self.count_profile()
            nodes = self.units(job.jobid)
            duration = job.resource_request.duration
            start = None
            if nodes <= profile.capacity:
                start = profile.earliest(nodes, planner.window(duration))
            if start == now and profile.free_now >= nodes:
                started = self._start_counted(job, waiting)
                if started is not None:
                    if started:
                        self._hold_counts(profile, None, now, duration, nodes)
                        self._count_move(before.get(job.jobid), now)
                    yield
                    continue
            waiting = True
            keep.add(job.jobid)
            if start is None:
                self.annotations.update(
                    job, t_estimate=None, reason_pending=REASON_NO_ESTIMATE
                )
            else:
                holders.add(job.jobid)
                self._count_move(before.get(job.jobid), start)
                until = self._hold_counts(profile, None, start, duration, nodes)
                planner.promise(job.jobid, start, until, nodes)
                self._estimate(job, start)
            yield
        self._clear_others(keep)

    def _backfill_counted(self, profile, rest, cutoff, waiting: bool):
        """Start, in queue order, the jobs *rest* (the queue after *cutoff*,
        a queue key or None for all of it) that fit now in *profile* for
        their whole window, around the reservations it holds.

        Starts only take units away: what did not fit with as few units and
        as early an end does not fit later in the pass (a frontier of such
        requests), and once that rules out the smallest request with the
        shortest limit, no job left can start.  Identical requests
        (:meth:`~flux_sched_base.scheduler.PlanningScheduler.
        identical_groups`) fit or not alike, so on a long queue of few
        distinct requests the scan walks one job per group (a heap of group
        heads in queue order, a group's next job once its head has started,
        a group dropped when its head does not fit).  Listing the groups
        costs one step per group: the scan goes job by job until it has
        taken as many steps, then by group, so it costs at most about twice
        the cheaper of the two.
        """
        planner = self.planner
        now = planner.now
        least = self.least_units()
        # The earliest end of any pending job started now.
        shortest_end = planner.window_end(now, self.shortest_duration() or 0.0)
        failed = _Frontier()  # (units, end) that did not fit now
        groups = self.identical_group_count()
        steps = 0

        def attempt(job) -> str:
            """Start *job* if it fits: ``"answered"`` if it started or was
            denied, ``"no room"`` if the allocator found none after all,
            ``"no"`` if it does not fit, ``"done"`` if no job left can."""
            nodes = self.units(job.jobid)
            duration = job.resource_request.duration
            end = planner.window_end(now, duration)
            if nodes > profile.capacity or failed.covers(nodes, end):
                return "no"
            if not (profile.free_now >= nodes and profile.fits_now(end, nodes)):
                failed.add(nodes, end)
                return "done" if failed.covers(least, shortest_end) else "no"
            started = self._start_counted(job, waiting)
            if started is None:
                return "no room"
            if started:
                self._hold_counts(profile, None, now, duration, nodes)
            return "answered"

        for job in rest:
            if profile.free_now < least:
                return  # nothing can start now
            if steps >= groups:
                break  # the rest by group, from the job after *cutoff*
            steps += 1
            cutoff = queue_order(job)
            outcome = attempt(job)
            if outcome == "done":
                return
            waiting = waiting or outcome != "answered"  # a job it passes waits
            if outcome == "answered" or self.cheap_yield():
                yield
        else:
            return
        heap = [
            (queue_order(job), n, key, job)
            for n, (key, job) in enumerate(self.identical_groups(cutoff))
        ]
        heapq.heapify(heap)
        serial = len(heap)
        while heap and profile.free_now >= least:
            order, _, key, job = heapq.heappop(heap)
            outcome = attempt(job)
            if outcome == "done":
                return
            if outcome != "no":  # the group's next job may fit as well
                following = self.next_identical(key, order)
                if following is not None:
                    serial += 1
                    heapq.heappush(
                        heap, (queue_order(following), serial, key, following)
                    )
            waiting = waiting or outcome != "answered"
            if outcome == "answered" or self.cheap_yield():
                yield

    def _compress_counted(self):
        """:meth:`plan_counted` for unlimited depth: keep and compress.

        The profile holds every reservation from the start (built in one
        sweep).  A holder whose reservation is still free of conflicts keeps
        it untouched when it cannot start earlier, which a pass knows
        without a search in two cases: too few nodes are free at every
        instant before its start, or the plan has got lighter nowhere
        before the reservation's end since the holder's last turn (its
        earliest fit then is where it is: see :class:`~flux_sched_base.compression.Lightening`).  The
        others look for an earlier start with their reservation still held
        (:meth:`_keeps`), and only those that find one give theirs up.  The
        profile of the jobs ahead (for new jobs, and holders placed again)
        is built only when one needs it, and brought up to date in one
        sweep.  Promises of jobs the pass has not reached stay recorded, so
        a pass cut short by an event loses none.  When the pass before made
        nothing lighter and only jobs behind all of its own arrived since,
        every job it reached would keep what it has, and the pass starts at
        the first arrival (:meth:`_only_arrivals`).
        """
        planner = self.planner
        planner.begin_pass(time.time())
        now = planner.now
        held = self._held_counts()
        serial = self.next_pass_serial()
        last = self.__dict__.pop("_lightening", None)
        if last is not None and last.serial != serial - 1:
            # A pass that planned ranks (the only one that leaves
            # reservations on ranks) came between.
            last = None
        for jobid in list(planner.reservations):
            planner.drop(jobid, lighten=False)  # left by a pass that planned ranks
        planner.promises.clear()
        planner.promises.update(held)
        profile = light = None
        overcommitted = False
        self._kept_searches = KeptSearches()

        carried = self.__dict__.pop("_carried", None)
        all_kept = self.__dict__.pop("_all_kept", None)
        event = self._event

        def build():
            nonlocal profile, light, overcommitted, carried
            unit = self.count_unit()
            found = self._carried_profile(carried, unit, held)
            if found is None:
                profile = self.count_profile().adjusted(held.values())
                until = max((end for _, end, _ in held.values()), default=INF)
                light = Lightening(serial, unit, profile, last, until)
            else:
                profile, span = found
                light = Lightening(serial, unit, profile, last, since_begin=span)
            overcommitted = profile.lowest() < 0
            carried = Carried(unit)
            planner.releases.mark()

        if held:
            build()
        # Without reservations, built when the first job does not fit now;
        # no job holds one, so the lightening record lost is empty.
        ahead = None  # without unreached holders' reservations, built on demand
        ahead_adds: list[tuple[float, float, int]] = []
        started_spans: list = []  # (now, end, -units) of the jobs started
        holders: set[int] = set()
        keep: set[int] = set()  # annotated: holders and jobs with no estimate
        waiting = False
        first = 0  # the queue position the walk starts from
        pause = 0  # yields standing for the jobs skipped
        verify = None  # with check_reuse: what the skipped walk must leave
        if held and self._only_arrivals(all_kept, light, held, overcommitted):
            if self.check_reuse:
                verify = self._before_walk(all_kept, held)
            else:
                # Every job up to the last one then keeps what it has: its
                # reservation (held in the profile), or no estimate.
                first = all_kept.pending
                self._arrival_passes += 1
                keep.update(self.annotations.annotated())
                holders.update(held)
                pause = self._skipped_yields(len(held), first - len(held))
                held.clear()
                waiting = True

        def hold(start: float, duration: float, nodes: int, around_ahead: bool, old):
            """Hold a start or reservation in the profile (and, later, in
            the jobs-ahead profile), in place of the reservation *old*
            (``(start, end)``) if not None; return its end."""
            nonlocal overcommitted
            until = planner.window_end(start, duration)
            if old is None:
                profile.hold(start, until, nodes)
            else:
                profile.move(*old, start, until, nodes)
            light.placed(start, until)
            if ahead is not None:
                ahead_adds.append((start, until, nodes))
            if around_ahead:
                # Placed around the jobs ahead only: it may overlap an
                # unreached holder's reservation.
                overcommitted |= profile.min_over(start, until) < 0
            return until

        # The release log as the pass last saw it: an event aborts the pass
        # at a yield, so what it released after that is still to be looked
        # at (a job started by the pass may even have ended: in the log's
        # totals its start and its free cancel out).
        seen = None
        finished = False
        try:
            for _ in range(pause):
                seen = planner.releases.position()
                yield
            for job in self.pending_jobs(start=first):
                jobid = job.jobid
                if verify is not None and queue_order(job) > verify.last_key:
                    self._verify_all_kept(verify)
                    verify = None
                if profile is None:
                    if self._start_before_planning(job, waiting):
                        seen = planner.releases.position()
                        yield
                        continue
                    if self._no_start_time(job):
                        # What the profile would say, without building it.
                        waiting = True
                        keep.add(jobid)
                        planner.promises.pop(jobid, None)
                        self.annotations.update(
                            job, t_estimate=None, reason_pending=REASON_NO_ESTIMATE
                        )
                        seen = planner.releases.position()
                        yield
                        continue
                    build()
                light.turn(jobid)
                nodes = self.units(jobid)
                duration = job.resource_request.duration
                mine = held.pop(jobid, None)
                around_ahead = True
                earlier = None
                moving = None  # a reservation given up once the new one is held
                if mine is not None:
                    start, until, _ = mine
                    if not overcommitted or profile.min_over(start, until) >= 0:
                        if start > now:
                            kept, earlier = self._keeps(
                                profile, light, jobid, mine, nodes, duration
                            )
                            if kept:
                                # Cannot start any earlier: kept as it is.
                                waiting = True
                                keep.add(jobid)
                                holders.add(jobid)
                                if ahead is not None:
                                    ahead_adds.append(mine)
                                self._estimate(job, start)
                                if self.cheap_yield():
                                    seen = planner.releases.position()
                                    yield
                                continue
                        around_ahead = False
                    # Moves earlier; or a job that rose ahead, a longer
                    # expiration or nodes going down took it: placed again
                    # like a new job.  Moving to a start already found, it
                    # is given up and taken again in one step.
                    if earlier is None:
                        profile.hold(start, until, -nodes)
                    else:
                        moving = (start, until)
                    light.released(start, until)
                if around_ahead and not held:
                    # Every holder is reached: the jobs ahead are all of them.
                    ahead, ahead_adds = None, []
                    around_ahead = False
                    where = profile
                elif around_ahead:
                    if ahead is None:
                        ahead = profile.adjusted(
                            (s, e, -n) for s, e, n in held.values()
                        )
                    elif len(ahead_adds) > 8:
                        ahead = ahead.adjusted(ahead_adds)
                    else:
                        for s, e, n in ahead_adds:
                            ahead.hold(s, e, n)
                    ahead_adds = []
                    where = ahead
                else:
                    where = profile
                start = earlier
                if earlier is None and nodes <= where.capacity:
                    start = where.earliest(nodes, planner.window(duration))
                if start == now and where.free_now >= nodes:
                    started = self._start_counted(job, waiting)
                    if started is not None:
                        if started:
                            until = hold(now, duration, nodes, around_ahead, moving)
                            started_spans.append((now, until, -nodes))
                            self._count_move(mine, now)
                        elif moving is not None:
                            profile.hold(*moving, -nodes)  # denied
                        seen = planner.releases.position()
                        yield
                        continue
                waiting = True
                keep.add(jobid)
                if start is None:
                    planner.promises.pop(jobid, None)
                    self.annotations.update(
                        job, t_estimate=None, reason_pending=REASON_NO_ESTIMATE
                    )
                else:
                    holders.add(jobid)
                    self._count_move(mine, start)
                    until = hold(start, duration, nodes, around_ahead, moving)
                    planner.promise(jobid, start, until, nodes)
                    self._estimate(job, start)
                seen = planner.releases.position()
                yield
            if verify is not None:
                self._verify_all_kept(verify)
            finished = True
            if light is not None and self._queue and self._event == event:
                self._record_all_kept(serial, light, len(holders))
        finally:
            # Also when an event cuts the pass short: the next pass starts
            # from what this one saw and did.
            if light is not None:
                self._lightening = light.close(self._pending)
                carried.end_position = planner.releases.position() if finished else seen
                carried.promises = {
                    jobid: promise
                    for jobid, promise in planner.promises.items()
                    if jobid in holders or jobid in held
                }
                # A copy (the lightening record compares with the profile as
                # the pass left it), without the steps that moved
                # reservations left behind.
                carried.base = profile.adjusted(started_spans).compacted()
                self._carried = carried
        for jobid in list(planner.promises):
            if jobid not in holders:
                del planner.promises[jobid]
        self._clear_others(keep)

    def _count_move(self, held, start: float) -> None:
        """Count a job started or placed at *start*, earlier than the
        reservation ``(start, end, units)`` it *held* (None: none)."""
        if held is not None and start < held[0]:
            self._moves += 1

    def _keeps(self, profile, light, jobid: int, mine, nodes: int, duration: float):
        """Can a holder start earlier than its reservation ``mine = (start,
        until, nodes)`` (later than now, held in *profile* without a
        conflict)?  Decided without giving the reservation up.

        Returns ``(True, None)``: it cannot, it keeps it;
        ``(False, when)``: it can, at *when* at the earliest;
        ``(False, None)``: not known here, search afresh.
        """
        start, until, _ = mine
        window = self.planner.window(duration)
        if window(start) != until:
            # The instance's expiration moved its windows.
            return (not profile.free_before(start, nodes)), None
        first, last = light.span(jobid)
        if first >= until:
            return True, None  # nothing lighter before its reservation ends
        # Only a start whose window overlaps a stretch made lighter (all
        # before *last*) can fit now.  Its own reservation covers the part
        # of every earlier window from *start* on, so windows are searched
        # up to *start* only.
        before = min(start, last)
        kept = self._kept_searches
        span = duration if duration > 0.0 else INF
        floor = profile.now
        if kept is not None:
            known = kept.searched_until(profile, nodes, span, start)
            if known >= before:
                if self.check_kept_searches:
                    found = profile.earliest(nodes, window, before=before, cap=start)
                    assert found is None, f"a covered search finds {found}"
                return True, None
            if known > floor:
                # The first candidate from then on: where a step begins.
                t = profile.t
                i = bisect.bisect_left(t, known)
                floor = t[i] if i < len(t) else before
        earlier = None
        if floor < before:
            earlier = profile.earliest(
                nodes, window, floor=floor, before=before, cap=start
            )
        if floor != profile.now and self.check_kept_searches:
            found = profile.earliest(nodes, window, before=before, cap=start)
            assert found == earlier, f"searched from {floor}: {earlier}, not {found}"
        if earlier is None and kept is not None:
            kept.add(nodes, span, start, before)
        return earlier is None, earlier

    #: Search also where :class:`~flux_sched_base.compression.KeptSearches` says no start is found, and
    #: fail if one is (tests).
    check_kept_searches = False

    #: Build every carried profile afresh as well and compare (tests).
    check_carried = False

    def _carried_profile(self, carried: Carried | None, unit, held: dict):
        """The profile of running jobs and *held* reservations, from what
        the last pass kept (:class:`~flux_sched_base.compression.Carried`), with the span made lighter
        since that pass ended; None when it cannot be had that way (no
        pass kept one, the unit changed, the ranks were counted anew, or
        the kept profile has grown too far past what a fresh one holds)."""
        if carried is None or carried.unit != unit or carried.promises is None:
            return None
        planner = self.planner
        releases = planner.releases
        now = planner.now
        changes = releases.changes(unit)
        base = carried.base
        if changes is None or now < base.now:
            return None
        if len(base.t) > 2 * (releases.ends(unit) + 2 * len(held)) + 32:
            return None  # steps left by reservations since released
        holds = [(now, end, delta) for end, delta in changes.items() if end > now]
        kept = carried.promises
        for jobid, promise in kept.items():
            if held.get(jobid) != promise:
                start, end, units = promise
                holds.append((start, end, -units))
        for jobid, promise in held.items():
            if kept.get(jobid) != promise:
                holds.append(promise)
        profile = base.advanced(now).adjusted(holds)
        profile.free_now = releases.free_now(unit) - sum(
            units for start, _, units in held.values() if start <= now
        )
        # Lighter since the pass ended: running jobs gone, reservations let go.
        first, last = INF, -INF
        lighter = releases.changes(unit, carried.end_position)
        for end, delta in lighter.items():
            if delta < 0 and end > now:
                first, last = now, max(last, end)
        for jobid, (start, end, _) in carried.promises.items():
            if held.get(jobid) != carried.promises[jobid] and end > now:
                first, last = min(first, max(start, now)), max(last, end)
        if self.check_carried:
            fresh = self.count_profile().adjusted(held.values())
            assert (fresh.steps(), fresh.free_now, fresh.capacity) == (
                profile.steps(),
                profile.free_now,
                profile.capacity,
            ), "the carried profile differs from a fresh one"
        return profile, (first, last)

    def _held_counts(self) -> dict[int, tuple[float, float, int]]:
        """The reservations pending jobs hold, as counts: promises, and
        reservations a pass with ranks left (their counts).

        A reservation whose start has passed without the job starting (a
        running job overran its planned end, e.g. in housekeeping) is
        overdue: it no longer holds anything, and its job is placed again
        like a new one, around the jobs ahead of it only (as
        ``Planner.still_valid`` has it for reservations on ranks).  Held
        as is, it would be clipped to ``[now, old end)`` and push the
        jobs ahead of it later.
        """
        now = self.planner.now
        held = {}
        for jobid, promise in self.planner.promises.items():
            if jobid in self._pending and promise[0] >= now:
                held[jobid] = promise
        for jobid, item in self.planner.reservations.items():
            nodes = self.units(jobid)
            if nodes is not None and item.start >= now:
                held[jobid] = (item.start, item.end, nodes)
        return held

    def _start_before_planning(self, job, waiting: bool, held=None) -> bool:
        """Start *job* if it fits in the units free now, before a pass has
        built its profile; True if it was started or denied.  *held*: the
        reservation it held from the pass before (see :meth:`_count_move`).

        Until a pass holds anything, the profile would hold running jobs
        only, whose free units never shrink over time: a job that fits now
        fits for its whole time limit, so no profile is needed to say so.
        """
        units = self.units(job.jobid)
        if units is None or units > self.count_free_now():
            return False
        started = self._start_counted(job, waiting)
        if started:
            self._count_move(held, self.planner.now)
        return started is not None

    def _no_start_time(self, job) -> bool:
        """Before a pass holds anything: is there no start time to estimate
        for *job*, too big for the units free now?  So when every running
        job holds its units with no end (jobs without a time limit, as
        flux-schedbench submits, in an instance without expiration): the
        units free now are all there will be until one is freed, and a pass
        need not build its profile to find that out."""
        units = self.units(job.jobid)
        return (
            units is not None
            and units > self.count_free_now()
            and self.planner.releases.all_endless(self.count_unit())
        )

    def _hold_counts(self, profile, ahead, start: float, duration, nodes: int):
        """Hold a start or reservation in both profiles; return its end."""
        until = self.planner.window_end(start, duration)
        profile.hold(start, until, nodes)
        if ahead is not None:
            ahead.hold(start, until, nodes)
        return until

    def _start_counted(self, job, waiting: bool) -> bool | None:
        """Allocate *job* on any free nodes now.

        True if it started, False if it was denied, None if the allocator
        found no room after all (the counts said it would).
        """
        had_estimate = self.annotations.get(job.jobid, "t_estimate") is not None
        try:
            R = self.planner.start_now(
                job.jobid, job.resource_request, ignore_reservations=True
            )
        except InfeasibleRequest as exc:
            self.deny(job, exc)
            return False
        if R is None:
            return None
        if had_estimate:
            selection = RESERVED
        else:
            selection = BACKFILLED if waiting else IMMEDIATE
        self.start(job, R, selection)
        return True

    def _clear_others(self, holders: set[int]) -> None:
        """Clear the annotations of pending jobs that hold no reservation."""
        for jobid in self.annotations.annotated():
            if jobid not in holders:
                job = self._pending.get(jobid)
                if job is not None:
                    self.annotations.clear(job)

    def _estimate(self, job, start: float) -> None:
        annotations = self.annotations
        now = self.planner.now
        if (
            annotations.estimate_stands(job.jobid, start, now)
            and annotations.get(job.jobid, "reason_pending") == REASON_RESOURCES
        ):
            return  # the usual case for a holder kept as it was
        annotations.update(
            job, now=now, t_estimate=start, reason_pending=REASON_RESOURCES
        )
