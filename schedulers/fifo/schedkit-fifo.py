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


class FifoScheduler(PlanningScheduler):
    """Strict priority FIFO with forward-planned start estimates."""

    queue_depth = 8
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
        blocked = False
        for job in self.pending_jobs():
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
                break
            self.start(job, R, IMMEDIATE)
            yield
        if not blocked:
            self._drop_reservations()
        elif self.counted_queue():
            self._drop_reservations()
            yield from self._forecast_counted()
        else:
            yield from self._forecast(last)

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
                    continue
                if position < len(entries) or stopped:
                    # Not the same jobs first: place them all again.
                    planner.promises.clear()  # only reused ones were made
                    yield from self._forecast_counted()
                    return
                profile = last[3]
                last = None
            if profile is None:
                profile = self.count_profile()
            start, end = _place(planner, profile, nodes, duration, floor, include_floor)
            kept.append((job.jobid, nodes, duration, start, end))
            if start is None:
                self.annotations.update(
                    job, t_estimate=None, reason_pending=REASON_NO_ESTIMATE
                )
                break
            planner.promise(job.jobid, start, end, nodes)
            reason = REASON_RESOURCES if position == 0 else REASON_PRIORITY
            self.annotations.update(job, t_estimate=start, reason_pending=reason)
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

    def _clear_estimates(self, estimated: set) -> None:
        for jobid in self.annotations.annotated():
            if jobid not in estimated and jobid in self._pending:
                self.annotations.clear(self._pending[jobid])

    def _forecast(self, last=None):
        """Give the first ``forecast_depth`` jobs their FIFO start times.

        *last* is what the last complete forecast left: the expiration
        and the resources' version, ``(jobid, request, start)`` of the jobs it placed (with their
        reservations still in the plan), the planner's heavy and lighten
        epochs when it ended, and whether a fresh forecast would have
        placed the same reservations.  If nothing got heavier since (no job
        started, no reservation was placed, no expiration was extended, no
        rank went down) and every start is still ahead of now, a job that
        is in the same place in the queue, with the same request, keeps
        its reservation: it was placed around the running jobs and the
        jobs ahead of it alone.  If the plan got lighter meanwhile (a job
        ended early), it keeps it only if no earlier start appeared on the
        ranks that got lighter (the only place one can appear).  From the
        first job that differs or moves earlier on, the jobs are placed
        again.
        """
        planner = self.planner
        now = planner.now
        # The resources as they are (their version), and the expiration.
        context = (planner.pool.expiration, planner.ranks_version(()))
        entries: list = []
        lightened: set | None = set()
        if (
            last is not None
            and last[0] == context
            and last[2] == planner.heavy_epoch
            and all(start is None or start > now for _, _, start in last[1])
        ):
            entries = last[1]
            if last[3] != planner.lighten_epoch:
                lightened = planner.lightened_since(last[3])
        if not entries:
            self._drop_reservations()
        kept: list = []  # (jobid, request, start or None) in queue order
        reused = 0
        estimated = set()
        floor, include_floor = now, False
        position = 0
        for job in self.pending_jobs():
            if position >= self.forecast_depth:
                break
            rr = job.resource_request
            earlier = None  # a start the kept reservation missed
            if reused == position < len(entries):
                jobid, request, start = entries[position]
                held = planner.reservations.get(jobid)
                if (
                    jobid == job.jobid
                    and request is rr
                    and (start is None or (held is not None and held.start == start))
                ):
                    planner.settle(jobid)
                    # Ranks that came up may give a job without an
                    # estimate one: place it again.
                    moved = start is None and lightened != set()
                    if start is not None and lightened != set():
                        # The head's window may not start now, so its floor
                        # is left out: if nothing ends at its start any
                        # more, an earlier time may fit only at that floor,
                        # and a fresh search finds a later one, or none.
                        moved = position == 0 and not planner.running_end_at(start)
                    if start is not None and lightened != set() and not moved:
                        try:
                            earlier = self._earlier(
                                job, start, floor, include_floor, lightened
                            )
                        except InfeasibleRequest:
                            earlier = None  # placed again, and denied there
                            moved = True
                        moved = moved or earlier is not None
                    if not moved:
                        kept.append(entries[position])
                        estimated.add(jobid)
                        reused += 1
                        position += 1
                        if start is None:
                            break  # no estimate, as before: none behind it either
                        floor, include_floor = start, True
                        continue
            if reused == position and entries:
                # Not the same job here, or it can start earlier: place it
                # and those behind afresh.
                for jobid, _, _ in entries[position:]:
                    planner.drop(jobid, lighten=False)
                entries = []
            # Jobs behind the head held on, so their ends were times to try
            # as well; from the second job on, an earlier one fits too
            # (its floor is a start of the job ahead), and the search found it.
            found = earlier if position > 0 else None
            if found is None:
                try:
                    found = planner.earliest(
                        job.jobid, rr, floor=floor, include_floor=include_floor
                    )
                except InfeasibleRequest as exc:
                    self.deny(job, exc)
                    yield
                    continue
            estimated.add(job.jobid)
            reason = REASON_RESOURCES if position == 0 else REASON_PRIORITY
            position += 1
            if found is None:
                # Nothing that ends frees enough: no estimate here or behind.
                kept.append((job.jobid, rr, None))
                self.annotations.update(
                    job, t_estimate=None, reason_pending=REASON_NO_ESTIMATE
                )
                break
            start, R = found
            end = planner.window_end(start, rr.duration)
            planner.reserve(job.jobid, start, end, R)
            kept.append((job.jobid, rr, start))
            self.annotations.update(job, t_estimate=start, reason_pending=reason)
            floor, include_floor = start, True
            yield
        for jobid, _, _ in entries[reused:]:
            planner.drop(jobid, lighten=False)  # left the queue since
        self._clear_estimates(estimated)
        # Reservations kept through a lightening may sit on other ranks
        # than a fresh forecast would pick, and the jobs behind them with
        # them; otherwise the forecast is the one a fresh pass makes.
        as_fresh = not reused or (last[4] and lightened == set())
        if self.check_reuse and reused:
            self._check_forecast(kept, compare_fresh=as_fresh)
        self._last_ranked = (
            context,
            kept,
            planner.heavy_epoch,
            planner.lighten_epoch,
            as_fresh,
        )

    def _earlier(self, job, start, floor, include_floor, lightened):
        """An earlier start than *start* for a job whose kept reservation
        was placed before the plan got lighter on *lightened* ranks (None:
        on ranks too long ago to say), or None.

        Returns ``(t, R)`` as :meth:`Planner.earliest` does.  Jobs behind
        it are still held in the pass, so they are left out, as they were
        when it was placed.
        """
        planner = self.planner
        within = None
        if lightened is not None:
            # A start the job did not have before uses a rank that got
            # lighter: read only the times one of them could host it.
            within = planner.starts(
                job.jobid,
                job.resource_request,
                floor=floor,
                limit=start,
                exclude_held=True,
                ranks=lightened,
                needed=1,
            )
            if within is not None and not within:
                return None
        return planner.earliest(
            job.jobid,
            job.resource_request,
            floor=floor,
            include_floor=include_floor,
            limit=start,
            exclude_held=True,
            within=within,
        )

    def _check_forecast(self, kept: list, compare_fresh: bool) -> None:
        """Fail unless every kept estimate is the job's earliest start given
        the jobs ahead of it as they are placed (tests: ``check_reuse``);
        with *compare_fresh* (nothing got lighter), also unless a forecast
        placed afresh finds the same starts."""
        planner = self.planner
        planner.begin_pass(planner.now)
        floor, include_floor = planner.now, False
        for jobid, rr, start in kept:
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
    *floor* in *profile*, held there; ``(None, None)`` if none."""
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
