"""schedkit-fifo: strict priority FIFO scheduler for Flux.

Jobs start in the job-manager's order (priority, then submission).  The
head of the queue blocks everyone behind it: no job ever starts while a
higher-priority job waits.  Behind a blocked head, the first
``forecast-depth`` jobs get a ``sched.t_estimate`` by forward planning:
each is placed at the earliest time it fits after the job ahead of it
starts, given when running jobs end (their expiration).

A site makes it the instance's scheduler with ``flux-schedkit site-config``
and ``[modules.alternatives] sched = "schedkit-fifo"`` (see the docs'
site page: the broker's Python then finds this library without PYTHONPATH).
By hand, in a broker whose Python can import ``flux_sched_base``, load with::

    flux module load $(flux-schedkit path fifo) [queue-depth=N|unlimited]
        [forecast-depth=N|unlimited] [log-level=LEVEL]

``queue-depth`` (default 8): how many alloc requests the job-manager keeps
outstanding.  FIFO only ever starts the head, so a short queue costs
nothing in scheduling quality and keeps the job-manager's withdrawals and
this module's work small (as sched-simple does).

``forecast-depth`` (default 8): how many queued jobs get a ``t_estimate``
(0 disables estimates).  Each estimate costs a walk of the plan, so the
bound keeps a pass cheap however long the queue is.
"""

import time

from flux.resource import InfeasibleRequest

from flux_sched_base import Option, PlanningScheduler, count_or_unlimited
from flux_sched_base.annotations import (
    IMMEDIATE,
    REASON_NO_ESTIMATE,
    REASON_PRIORITY,
    REASON_RESOURCES,
)
from flux_sched_base.counts import OrderedHolds
from flux_sched_base.one_slot_sweep import OneSlotSweep, SweepCannotSay
from flux_sched_base.scheduler import queue_order


class FifoScheduler(PlanningScheduler):
    """Strict priority FIFO with forward-planned start estimates."""

    queue_depth = 8
    # Its planning after the starts is the forecast of forecast-depth jobs
    # (8 by default): eight starts share a step.
    STARTS_PER_YIELD = 8
    options = (
        Option(
            "forecast-depth",
            "forecast_depth",
            8,
            count_or_unlimited(minimum=0),
            "number of queued jobs that get a t_estimate",
        ),
    )

    def plan(self):
        """Start jobs from the head while they fit; then estimate."""
        planner = self.planner
        planner.begin_pass(time.time())
        # Taken, not read: a pass that ends early leaves no forecast behind.
        # Reservations stay until the forecast (starting the head ignores
        # them), which may keep them.
        last = self.__dict__.pop("_last_ranked", None)
        planner.promises.clear()
        # (head, plan event) when a pass last found its head blocked: with
        # nothing freed since, only arrivals, the same head still is.
        blocked_head = self.__dict__.get("_blocked_head")
        blocked = False
        for job in self.pending_jobs():
            still = blocked_head == (job.jobid, self.plan_event)
            if still and not self.check_reuse:  # (tests ask all the same)
                blocked = True
                break
            try:
                R = planner.start_now(
                    job.jobid, job.resource_request, ignore_reservations=True
                )
            except InfeasibleRequest as exc:
                self.deny(job, exc)
                yield
                continue
            if R is None:
                blocked = True
                self._blocked_head = (job.jobid, self.plan_event)
                break
            assert not still, "a head blocked with nothing freed since started"
            self.start(job, R, IMMEDIATE)
            yield
        if not blocked:
            self._drop_reservations()
        elif self.counted_queue():
            self._drop_reservations()
            yield from self._forecast_counted()
        else:
            swept = self._sweep()
            if swept is None:
                yield from self._forecast(last)
            else:
                if planner.reservations:
                    self._drop_reservations()  # the last pass planned the other way
                yield from self._annotate_sweep(*swept)

    def _drop_reservations(self) -> None:
        for jobid in list(self.planner.reservations):
            self.planner.drop(jobid, lighten=False)

    def _forecast_counted(self):
        """:meth:`_forecast` for a queue planned with counts (whole nodes or cores).

        The last complete forecast is kept with the profile it left.  A
        pass that finds the same running jobs (the releases' version), the
        same unit and expiration, every estimate still ahead of now, and
        the jobs it estimated still first in the queue (a job that arrived
        queues behind them) reuses their estimates and places only the jobs
        after them: estimates are absolute times, so they do not move with
        now while nothing that makes them changes.
        """
        planner = self.planner
        now = planner.now
        context = (planner.releases.version, planner.pool.expiration, self.count_unit())
        # Taken, not read: a pass that ends early (a message arrived) leaves
        # no forecast behind, and the next one places every job afresh.
        last = self.__dict__.pop("_last_forecast", None)
        if last is not None and (
            last[0] != context
            or any(start is not None and start <= now for _, _, _, start, _ in last[1])
        ):
            last = None
        profile = None
        kept: list[tuple] = []  # (jobid, units, duration, start or None, end)
        reused = 0
        estimated = set()
        floor, include_floor = now, False
        for position, job in enumerate(self.pending_jobs()):
            if position >= self.forecast_depth:
                break
            nodes = self.units(job.jobid)
            duration = job.resource_request.duration
            estimated.add(job.jobid)
            if last is not None:
                entries, stopped = last[1], last[2]
                if position < len(entries) and entries[position][:3] == (
                    job.jobid,
                    nodes,
                    duration,
                ):
                    entry = entries[position]
                    kept.append(entry)
                    reused += 1
                    if entry[3] is None:
                        break  # no estimate, as before: none behind it either
                    planner.promise(job.jobid, entry[3], entry[4], nodes)
                    floor, include_floor = entry[3], True
                    if self.annotations.get(job.jobid, "t_estimate") != entry[3]:
                        # Left standing for it by a share of the wait,
                        # which shrinks as the start comes nearer.
                        self.annotations.update(
                            job,
                            now=now,
                            t_estimate=entry[3],
                            reason_pending=(
                                REASON_RESOURCES if position == 0 else REASON_PRIORITY
                            ),
                        )
                    continue
                if position < len(entries) or stopped:
                    # Not the same jobs first: place them all again.
                    planner.promises.clear()  # only reused ones were made
                    yield from self._forecast_counted()
                    return
                profile = last[3]
                last = None
            if profile is None:
                profile = OrderedHolds(self.count_profile())
            start, end = profile.place(
                nodes, planner.window(duration), floor, include_floor
            )
            kept.append((job.jobid, nodes, duration, start, end))
            if start is None:
                self.annotations.update(
                    job, t_estimate=None, reason_pending=REASON_NO_ESTIMATE
                )
                break
            planner.promise(job.jobid, start, end, nodes)
            reason = REASON_RESOURCES if position == 0 else REASON_PRIORITY
            self.annotations.update(
                job, now=planner.now, t_estimate=start, reason_pending=reason
            )
            floor, include_floor = start, True
            if self.cheap_yield():
                yield
        self._clear_estimates(estimated)
        if profile is None and last is not None:
            profile = last[3]  # every estimate reused
        if profile is not None:
            stopped = bool(kept) and kept[-1][3] is None
            self._last_forecast = (context, kept, stopped, profile)
        if self.check_reuse and reused:
            assert self._fresh_forecast(kept) == kept, "kept estimates differ"

    def _fresh_forecast(self, jobs: list[tuple]) -> list[tuple]:
        """The estimates of *jobs* (``(jobid, units, duration, ...)``, in
        queue order) on a profile built now, as :meth:`_forecast_counted`
        places them without kept ones."""
        planner = self.planner
        profile = self.count_profile()
        floor, include_floor = planner.now, False
        out = []
        for jobid, nodes, duration, _, _ in jobs:
            start, end = _place(planner, profile, nodes, duration, floor, include_floor)
            out.append((jobid, nodes, duration, start, end))
            if start is None:
                break
            floor, include_floor = start, True
        return out

    def _sweep(self):
        """The forecast of a queue whose first ``forecast_depth`` jobs are
        each one slot of cores, found by
        :class:`~flux_sched_base.one_slot_sweep.OneSlotSweep`: ``(context,
        placed, sweep, stopped, reused)``, *placed* a list of ``(job,
        request, start, end, rank)`` (start None: no estimate, and none
        behind it) whose first *reused* come from the last sweep, or None
        where the sweep cannot say (then :meth:`_forecast` answers).

        The last complete sweep is kept with its state.  A pass that finds
        the same running jobs, resources and pool (its context), no running
        job overdue, every estimate still ahead of now and the jobs it
        placed still first in the queue reuses their estimates and places
        only the jobs behind them: nothing that makes the estimates (all
        after now) has changed, so a sweep from now finds the same.
        """
        planner = self.planner
        now = planner.now
        # Taken, not read: a pass that ends early leaves no forecast behind.
        last = self.__dict__.pop("_last_sweep", None)
        jobs = []
        for job in self.pending_jobs():
            if len(jobs) >= self.forecast_depth:
                break
            jobs.append(job)
        context = OneSlotSweep.context(planner)
        if not jobs:
            return context, [], None, False, 0  # forecast-depth=0
        placed: list[tuple] = []
        sweep, stopped = None, False
        if (
            last is not None
            and last[0] == context
            and len(jobs) >= len(last[1])
            and not planner.running_ended_by(now)
        ):
            kept = last[1]
            if all(
                job is entry[0]
                and job.resource_request is entry[1]
                and (entry[2] is None or entry[2] > now)
                for job, entry in zip(jobs, kept, strict=False)
            ):
                placed, sweep, stopped = list(kept), last[2], last[3]
        reused = len(placed)
        try:
            if sweep is None:
                sweep = OneSlotSweep(planner, self.__dict__.get("_room_now"))
                self._room_now = sweep.room  # kept up to date from pass to pass
            for job in jobs[len(placed) :]:
                if stopped:
                    break
                rr = job.resource_request
                if not sweep.takes(rr):
                    return None
                found = sweep.place(rr)
                if found is None:
                    placed.append((job, rr, None, None, None))
                    stopped = True
                else:
                    placed.append((job, rr, *found))
        except SweepCannotSay:
            return None
        return context, placed, sweep, stopped, reused

    def _annotate_sweep(self, context, placed, sweep, stopped, reused):
        """Announce the estimates :meth:`_sweep` found.  The first *reused*
        were announced by the pass that found them, for the same jobs in
        the same places: those whose ``t_estimate`` went out as it is (not
        left standing for it, which may change with the time) are not
        announced again (tests announce them: nothing may be sent)."""
        planner = self.planner
        annotations = self.annotations
        estimated = set()
        for position, (job, rr, start, end, _) in enumerate(placed):
            estimated.add(job.jobid)
            again = (
                position < reused and annotations.get(job.jobid, "t_estimate") == start
            )
            if start is None:
                self.annotations.update(
                    job, t_estimate=None, reason_pending=REASON_NO_ESTIMATE
                )
                break
            planner.promise(job.jobid, start, end, rr.slot_size)
            if again and not self.check_reuse:
                continue
            reason = REASON_RESOURCES if position == 0 else REASON_PRIORITY
            sent = self.annotations.update(
                job, now=planner.now, t_estimate=start, reason_pending=reason
            )
            assert not (again and sent), "a reused estimate was sent again"
            if self.cheap_yield():
                yield
        self._clear_estimates(estimated)
        if self.check_reuse:
            self._check_sweep(placed, sweep)
        self._last_sweep = (context, placed, sweep, stopped)

    def _check_sweep(self, placed: list, sweep: OneSlotSweep | None) -> None:
        """Fail unless the planner places the jobs of a sweep (its own
        and those it kept) as the sweep did, start and R, each from the
        start of the one ahead (tests: ``check_reuse``)."""
        planner = self.planner
        planner.begin_pass(planner.now)
        self._drop_reservations()
        floor, include_floor = planner.now, False
        cores_on = {} if sweep is None else sweep.cores()
        seen: dict[int, int] = {}
        try:
            for job, rr, start, _, rank in placed:
                cores = None
                if rank is not None:
                    cores = cores_on[rank][seen.get(rank, 0)]
                    seen[rank] = seen.get(rank, 0) + 1
                found = planner.earliest(
                    job.jobid,
                    rr,
                    floor=floor,
                    include_floor=include_floor,
                    exclude_held=True,
                )
                if found is None:
                    assert start is None, f"swept {start}, planner none"
                    break
                t, R = found
                got = {r: info["cores"] for r, info in R._ranks.items()}
                assert (t, got) == (start, {rank: cores}), (
                    f"swept {start} on {rank} {sorted(cores or ())}, "
                    f"planner {t} on {got}"
                )
                end = planner.window_end(t, rr.duration)
                planner.reserve(job.jobid, t, end, R)
                floor, include_floor = t, True
        finally:
            self._drop_reservations()

    def _clear_estimates(self, estimated: set) -> None:
        for jobid in self.annotations.annotated():
            if jobid not in estimated and jobid in self._pending:
                self.annotations.clear(self._pending[jobid])

    def _forecast(self, last=None):
        """Give the first ``forecast_depth`` jobs their FIFO start times.

        Each job is placed at its earliest start from the start of the job
        ahead of it, given the running jobs and the reservations of the
        jobs ahead (the jobs behind it are held in the pass, so left out).

        *last* is what the last complete forecast left: its context (the
        expiration, the resources' version), ``(jobid, request, start,
        floor, include_floor)`` of each job it placed, with the
        reservations still in the plan, the planner's heavy and lighten
        epochs when it ended, and whether a fresh forecast would have
        placed the same reservations.  While the context is the same, no
        running job is overdue and the jobs it placed that still wait are
        in the same order, each of them keeps its reservation if it still
        holds (:meth:`_recheck`); any other job is placed afresh.
        """
        planner = self.planner
        now = planner.now
        context = (planner.pool.expiration, planner.ranks_version(()))
        heavy = planner.heavy_epoch
        entries: dict = {}
        # An overdue job holds resources the plan has free: the head may
        # fit now in the plan without starting, and a search from just
        # after now could then end on a time only a held job's end makes.
        if (
            last is not None
            and last[0] == context
            and not planner.running_ended_by(now)
        ):
            alive = [e for e in last[1] if e[0] in self._pending]
            # A job that fell behind another one (its priority dropped)
            # leaves the other room that no lightening records.
            order = [queue_order(self._pending[e[0]]) for e in alive]
            if order == sorted(order):
                entries = {e[0]: e for e in alive}
        if not entries:
            self._drop_reservations()
        since = last[3] if entries else planner.lighten_epoch
        kept: list = []  # (jobid, request, start or None, floor, include_floor)
        reused = 0
        placed = False  # a job so far was placed afresh
        mixed = False  # and a job behind it kept its reservation
        estimated = set()
        floor, include_floor = now, False
        for job in self.pending_jobs():
            if len(kept) >= self.forecast_depth:
                break
            jobid, rr = job.jobid, job.resource_request
            entry = entries.pop(jobid, None)
            found = None
            keep = False
            if entry is not None and entry[1] is rr:
                planner.settle(jobid)
                try:
                    keep, found = self._recheck(
                        jobid, rr, entry, floor, include_floor, since
                    )
                except InfeasibleRequest:
                    pass  # placed afresh below, and denied there
            if keep:
                start = entry[2]
                reused += 1
                mixed = mixed or placed
            else:
                placed = True
                if found is None:
                    try:
                        found = planner.earliest(
                            jobid,
                            rr,
                            floor=floor,
                            include_floor=include_floor,
                            exclude_held=True,
                        )
                    except InfeasibleRequest as exc:
                        self.deny(job, exc)
                        yield
                        continue
                start = None if found is None else found[0]
            estimated.add(jobid)
            kept.append((jobid, rr, start, floor, include_floor))
            if start is None:
                # Nothing that ends frees enough: no estimate here or behind.
                planner.drop(jobid)
                self.annotations.update(
                    job, t_estimate=None, reason_pending=REASON_NO_ESTIMATE
                )
                break
            if not keep:
                end = planner.window_end(start, rr.duration)
                planner.reserve(jobid, start, end, found[1])
            reason = REASON_RESOURCES if len(kept) == 1 else REASON_PRIORITY
            self.annotations.update(
                job, now=planner.now, t_estimate=start, reason_pending=reason
            )
            floor, include_floor = start, True
            if not keep:
                yield
        for jobid in list(planner.reservations):
            if jobid not in estimated:
                planner.drop(jobid, lighten=False)  # behind every estimate
        self._clear_estimates(estimated)
        # Reservations kept through a change may sit on other ranks than a
        # fresh forecast would pick, and the jobs behind them with them;
        # kept ones that were placed fresh, with new jobs only behind them,
        # do not.
        as_fresh = not reused or (
            last[4]
            and not mixed
            and heavy == last[2]
            and planner.lightened_since(since) == set()
        )
        if self.check_reuse and reused:
            self._check_forecast(kept, compare_fresh=as_fresh)
        self._last_ranked = (
            context,
            kept,
            planner.heavy_epoch,
            planner.lighten_epoch,
            as_fresh,
        )

    def _recheck(self, jobid, rr, entry, floor, include_floor, since):
        """Does the kept reservation of a job placed by the last forecast
        (*entry*) still give its earliest start from *floor*?

        Returns ``(True, None)`` to keep it, ``(False, (t, R))`` for an
        earlier start found, ``(False, None)`` to place the job afresh.
        The plan may have got heavier since it was placed (jobs started,
        reservations placed ahead of it) and lighter (jobs ended or left,
        reservations moved): if it is still free of conflicts, an earlier
        start can only come from ranks that got lighter, or from times
        below its old floor.  Its start need not be a time something ends
        any more: if it fits there, it fits at the last such time before
        (what runs in between runs at its start too), which the search
        finds; for the head, with nothing overdue, there is one, or it
        would have started now.
        """
        planner = self.planner
        _, _, start, old_floor, old_include = entry
        lightened = planner.lightened_since(since)
        lowered = floor < old_floor or (
            floor == old_floor and include_floor and not old_include
        )
        if start is None:
            return (not lowered and lightened == set()), None
        if start < floor or (start == floor and not include_floor):
            return False, None
        held = planner.reservations.get(jobid)
        if held is None or held.start != start or not planner.still_valid(held):
            return False, None  # dropped (its priority rose), or in conflict
        if start == floor:
            return True, None  # no time from the floor comes before it
        ranks = None
        if not lowered:
            if lightened == set():
                return True, None
            # A start the job did not have before uses a rank that got
            # lighter: only the times one of them could host it are read.
            ranks = lightened
        found = planner.earliest(
            jobid,
            rr,
            floor=floor,
            include_floor=include_floor,
            limit=start,
            exclude_held=True,
            ranks=ranks,
        )
        return found is None, found

    def _check_forecast(self, kept: list, compare_fresh: bool) -> None:
        """Fail unless every kept estimate is the job's earliest start given
        the jobs ahead of it as they are placed (tests: ``check_reuse``);
        with *compare_fresh* (the forecast is the one a fresh pass makes:
        nothing but arrivals behind it since), also unless a forecast
        placed afresh finds the same starts."""
        planner = self.planner
        planner.begin_pass(planner.now)
        floor, include_floor = planner.now, False
        for jobid, rr, start, _, _ in kept:
            planner.settle(jobid)
            found = planner.earliest(
                jobid, rr, floor=floor, include_floor=include_floor, exclude_held=True
            )
            earliest = None if found is None else found[0]
            assert earliest == start, f"kept estimate {start}, earliest {earliest}"
            if start is None:
                break
            floor, include_floor = start, True
        if compare_fresh:
            for _ in self._forecast():
                pass
            fresh = [(e[0], e[2]) for e in self._last_ranked[1]]
            assert fresh == [(e[0], e[2]) for e in kept], "kept estimates differ"


def _place(planner, profile, nodes, duration, floor, include_floor):
    """``(start, end)`` of the earliest window of *nodes* units from
    *floor* in *profile*, held there; ``(None, None)`` if none: what
    :meth:`~flux_sched_base.counts.OrderedHolds.place` finds, the plain
    way (the tests' check of kept estimates)."""
    start = None
    if nodes <= profile.capacity:
        start = profile.earliest(
            nodes, planner.window(duration), floor=floor, include_floor=include_floor
        )
    if start is None:
        return None, None
    end = planner.window_end(start, duration)
    profile.hold(start, end, nodes)
    return start, end


def mod_main(h, *args):
    FifoScheduler(h, *args).run()
