"""Passes that plan a queue of whole-node jobs with node counts.

When every pending job takes whole nodes (:func:`flux_sched_base.counts.
whole_nodes`), which nodes a job gets matters to no one else: a pass can
plan with the number of whole free nodes over time alone
(:class:`~flux_sched_base.counts.NodeProfile`), and a reservation is a
start time and a node count, the ranks chosen by the allocator when the
job starts.  This is the model of the textbook definitions of EASY and
conservative backfilling, and :class:`CountedPlanning` follows them to the
letter.  :class:`~flux_sched_base.reservation.ReservationScheduler` uses
it for such queues.
"""

from __future__ import annotations

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

INF = math.inf


class CountedPlanning:
    """The node-count pass of :class:`~flux_sched_base.reservation.
    ReservationScheduler` (a mixin: it uses the scheduler's planner, queue,
    annotations and :attr:`reservation_depth`)."""

    def plan_counted(self):
        """A pass over a queue of whole-node jobs, planned with node counts.

        Jobs are taken in queue order against a profile of whole free nodes
        (:class:`~flux_sched_base.counts.NodeProfile`) that holds the
        running jobs and, as the pass goes, every start and reservation it
        makes.  A job that fits now, for its whole time limit, starts now
        (on any free nodes: nothing else depends on which); otherwise,
        while fewer than :attr:`reservation_depth` jobs hold one, it gets
        the earliest reservation that fits: a start time and a node count.

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
        planner = self.planner
        planner.begin_pass(time.time())
        now = planner.now
        depth = self.reservation_depth
        held = self._held_counts() if depth == INF else {}
        for jobid in list(planner.reservations):
            planner.drop(jobid, lighten=False)  # left by a pass that planned ranks
        planner.promises.clear()
        profile = planner.node_profile()
        ahead = None  # without unreached holders' reservations
        if held:
            ahead = profile.copy()
            for start, until, nodes in held.values():
                profile.hold(start, until, nodes)
        holders: set[int] = set()
        keep: set[int] = set()  # annotated: holders and jobs with no estimate
        waiting = False
        for job in self.pending_jobs():
            reserving = len(holders) < depth
            if not reserving and profile.free_now <= 0:
                break  # nothing can start now, and no reservation is left
            nodes = self.whole_nodes(job)
            duration = job.resource_request.duration
            mine = held.pop(job.jobid, None)
            where = profile
            if mine is not None:
                profile.hold(mine[0], mine[1], -mine[2])
                if not profile.fits(mine[0], mine[1], mine[2]):
                    # A job that rose ahead, a longer expiration or nodes
                    # going down took it: placed again like a new job.
                    where = ahead
            elif ahead is not None:
                where = ahead
            start = None
            if nodes <= where.capacity:
                if reserving:
                    start = where.earliest(
                        nodes, lambda t, d=duration: planner.window_end(t, d)
                    )
                elif where.fits_now(planner.window_end(now, duration), nodes):
                    start = now
            if start == now and where.free_now >= nodes:
                started = self._start_counted(job, waiting)
                if started is not None:
                    if started:
                        self._hold_counts(profile, ahead, now, duration, nodes)
                    yield
                    continue
            waiting = True
            if not reserving:
                if self.cheap_yield():
                    yield
                continue
            keep.add(job.jobid)
            if start is None:
                self.annotations.update(
                    job, t_estimate=None, reason_pending=REASON_NO_ESTIMATE
                )
            else:
                holders.add(job.jobid)
                until = self._hold_counts(profile, ahead, start, duration, nodes)
                planner.promise(job.jobid, start, until, nodes)
                self._estimate(job, start)
            yield
        self._clear_others(keep)

    def _held_counts(self) -> dict[int, tuple[float, float, int]]:
        """The reservations pending jobs hold, as counts: promises, and
        reservations a pass with ranks left (their node counts).

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
            nodes = self._whole.get(jobid)
            if nodes is not None and item.start >= now:
                held[jobid] = (item.start, item.end, nodes)
        return held

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
        self.annotations.update(job, t_estimate=start, reason_pending=REASON_RESOURCES)
