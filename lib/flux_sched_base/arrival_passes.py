"""Unlimited-depth count passes that reach only the jobs that arrived.

A count pass of :class:`~flux_sched_base.counted.CountedPlanning` at
unlimited depth walks every pending job.  When the pass before it made
nothing lighter and only jobs behind all of its own arrived since, every
job that pass reached would keep what it has, its reservation or its lack
of one: :class:`ArrivalPasses` says when, and the pass starts at the first
arrival.  See "Passes that start at the arrivals" in
``docs/performance.rst``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from flux_sched_base.scheduler import queue_order

INF = math.inf


@dataclass
class AllKept:
    """What a count pass that reached every pending job, with no event
    during it and nothing made lighter, leaves for the next."""

    serial: int  #: the pass's number
    plan_event: int  #: the scheduler's plan events then
    last_key: tuple  #: queue key of the last pending job
    pending: int  #: how many jobs were pending
    holding: int  #: how many of them held a reservation


@dataclass
class BeforeWalk:
    """With ``check_reuse``: what a walk over the jobs a pass would have
    skipped must leave as it is."""

    last_key: tuple
    held: dict  #: jobid -> (start, end, units) of the holders
    started: int
    denied: int
    updates: int  #: annotation updates sent


class ArrivalPasses:
    """The part of :class:`~flux_sched_base.counted.CountedPlanning` that
    records a pass that kept everything and tells when the next may start
    at the arrivals (a mixin: it uses the scheduler's queue, planner,
    annotations and pass counters)."""

    #: Passes that reached only the jobs behind the last one of the pass
    #: before (see :meth:`_only_arrivals`).
    _arrival_passes = 0

    def _record_all_kept(self, serial: int, light, holding: int) -> None:
        """At the end of an unlimited-depth count pass that reached every
        pending job with no event during it: if the plan got lighter
        nowhere since the pass began (no job freed, no reservation given
        up, none moved), record what :meth:`_only_arrivals` needs."""
        if light.since_begin[0] != INF:
            return
        queue = self._queue
        self._all_kept = AllKept(
            serial, self.plan_event, queue_order(queue[-1]), len(queue), holding
        )

    def _only_arrivals(
        self, all_kept: AllKept | None, light, held: dict, overcommitted: bool
    ) -> bool:
        """Would a pass over every job leave the jobs up to the last one of
        the pass before as they are?  So it would if that pass recorded
        that nothing got lighter (:meth:`_record_all_kept`) and since then
        only jobs behind all of them arrived (no other event, the jobs up
        to that one still the same), nothing got lighter (*light*), no
        reservation overcommits, none has come due (still held, and
        starting after now), and every ``t_estimate`` sent still stands:
        each holder's earliest fit is still its reservation, and a job with
        no estimate still has none.
        """
        if all_kept is None or overcommitted:
            return False
        if (
            all_kept.serial != light.serial - 1
            or all_kept.plan_event != self.plan_event
            or light.since_begin[0] != INF
            or self._queue.bisect_key_right(all_kept.last_key) != all_kept.pending
            or len(held) != all_kept.holding  # one came due and was let go
        ):
            return False
        now = self.planner.now
        if min(start for start, _, _ in held.values()) <= now:
            return False
        unshown = self._unshown
        for jobid in [jobid for jobid in unshown if jobid not in held]:
            if jobid not in self._pending:
                del unshown[jobid]  # started or gone
        return min((unshown.get(jobid, INF) for jobid in held), default=INF) > now

    def _skipped_yields(self, kept: int, unestimated: int) -> int:
        """How many times a walk over *kept* holders that keep their
        reservations and *unestimated* jobs that still have no start would
        have yielded (every few cheap steps, and after each job without
        one); counts those cheap steps.  A pass that skips them yields as
        often, so the reactor runs at the same points between its answers
        (the order of what a pass sends and what it waits for stays as a
        pass over every job has it)."""
        steps = self._cheap + kept
        self._cheap = steps % self.CHEAP_YIELD_EVERY
        return steps // self.CHEAP_YIELD_EVERY + unestimated

    def _before_walk(self, all_kept: AllKept, held: dict) -> BeforeWalk:
        """With ``check_reuse``, where :meth:`_only_arrivals` would skip:
        what the walk over those jobs must leave (:meth:`_verify_all_kept`)."""
        return BeforeWalk(
            all_kept.last_key,
            dict(held),
            self._jobs_started,
            self._jobs_denied,
            self.annotations.updates,
        )

    def _verify_all_kept(self, before: BeforeWalk) -> None:
        """With ``check_reuse``: fail if the walk over the jobs that
        :meth:`_only_arrivals` would have skipped changed anything."""
        promises = self.planner.promises
        changed = [
            jobid
            for jobid, promise in before.held.items()
            if promises.get(jobid) != promise
        ]
        assert not changed, f"skipped holders would have moved: {changed[:5]}"
        assert (self._jobs_started, self._jobs_denied, self.annotations.updates) == (
            before.started,
            before.denied,
            before.updates,
        ), "a skipped job would have started, been denied or annotated"
