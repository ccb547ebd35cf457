"""What an unlimited-depth counted pass keeps so that the next one, and
the holders within it, search as little as the definition allows.

Conservative backfilling compresses every reservation in queue order on
every pass (:meth:`flux_sched_base.counted.CountedPlanning.
_compress_counted`).  Most holders cannot start earlier, and these classes
let a pass show it without a search: :class:`Lightening` records where and
when the plan got lighter since each holder's last turn,
:class:`KeptSearches` remembers searches that found nothing while the
profile is unchanged, and :class:`Carried` keeps the profile one pass
leaves for the next.
"""

from __future__ import annotations

import math

INF = math.inf


class KeptSearches:
    """Holders of a pass whose search for an earlier start found none,
    while the profile stays as it was (the same object, the same version).

    A holder asking no less than one of them (as many units or more, a
    window as long or longer, its reservation as late or later, searched
    up to the same time or sooner) finds none either: each of its
    candidate starts was one of the other's, and its window there, cut
    at its own later start, holds the other's window (both reservations
    are held in the profile), needing more.  Up to :attr:`KEPT` of them,
    none implied by another.  A search reads the profile's steps; on a
    short profile (fewer than :attr:`MIN_STEPS`: a short queue) it costs
    less than asking here would, and nothing is kept.
    """

    KEPT = 8
    MIN_STEPS = 2048

    def __init__(self):
        self.profile = None
        self.version = -1
        self.failed: list[tuple[int, float, float, float]] = []

    def covers(self, profile, nodes: int, span: float, start: float, before: float):
        """Does a search that found no earlier start cover this one?
        *span* is the window's length (``inf`` for no limit)."""
        if len(profile.t) < self.MIN_STEPS:
            return False
        if profile is not self.profile or profile.version != self.version:
            self.profile, self.version, self.failed = profile, profile.version, []
            return False
        return any(
            nodes >= n and span >= d and start >= s and before <= b
            for n, d, s, b in self.failed
        )

    def add(self, nodes: int, span: float, start: float, before: float) -> None:
        """Record a search that found no earlier start (just after
        :meth:`covers` said no for it, the profile unchanged)."""
        if self.profile is None or len(self.profile.t) < self.MIN_STEPS:
            return
        self.failed = [
            (n, d, s, b)
            for n, d, s, b in self.failed
            if not (n >= nodes and d >= span and s >= start and b <= before)
        ]
        self.failed.append((nodes, span, start, before))
        if len(self.failed) > self.KEPT:
            del self.failed[0]


class Lightening:
    """Where the plan of an unlimited-depth pass got lighter, and when.

    A holder placed at its earliest fit stays there as long as the plan
    gets no lighter within the window of an earlier start: every earlier
    start was ruled out by a window that has lost nothing since.  The plan
    gets lighter between passes (a job ends early, a reservation is
    dropped, resources come up: read from the changes applied to a carried
    profile (:class:`Carried`), or found by comparing the new profile with
    the one the last pass left) and within a pass (a holder placed again
    leaves part of its old slot).  For each job this keeps the span
    ``[first, last)`` that covers every stretch made lighter since its last
    turn, so a pass asks "can this holder start earlier?" with one
    comparison (nothing lighter before its reservation ends), and
    otherwise searches only the starts before *last*: the window of a
    start that fits now must overlap a stretch made lighter.  Knowledge is
    lost, never guessed: a job without a record is searched for in full.
    """

    _UNKNOWN = (-INF, INF)

    def __init__(
        self,
        serial: int,
        unit,
        profile,
        last: Lightening | None,
        until: float = INF,
        since_begin: tuple[float, float] | None = None,
    ):
        #: The pass's number (:meth:`CountedPlanning.next_pass_serial`).
        self.serial = serial
        self.unit = unit
        self.profile = profile
        if last is not None and last.unit == unit and since_begin is not None:
            #: The span made lighter since the pass began (running).
            self.since_begin = since_begin
            self._before = last.after
        elif last is not None and last.unit == unit:
            # No holder asks about times after *until* (the latest end of
            # a reservation held), so the comparison stops there.
            self.since_begin = profile.lighter_span(last.profile, until)
            self._before = last.after
        else:
            self.since_begin = self._UNKNOWN
            self._before = {}
        self._turns: list[int] = []
        self._log: list[tuple[int, float, float]] = []  # (turn, first, last)
        self._released: tuple[float, float] | None = None
        self._placed: tuple[float, float] | None = None
        #: For each job: the span made lighter after its turn.
        self.after: dict[int, tuple[float, float]] = {}

    def span(self, jobid: int) -> tuple[float, float]:
        """``(first, last)``: every stretch of the plan made lighter since
        *jobid*'s last turn lies within it (``(inf, -inf)``: none)."""
        first, last = self._before.get(jobid, self._UNKNOWN)
        begin_first, begin_last = self.since_begin
        return min(first, begin_first), max(last, begin_last)

    def turn(self, jobid: int) -> None:
        """The pass reaches *jobid*."""
        self._settle()
        self._turns.append(jobid)

    def released(self, start: float, end: float) -> None:
        """The job of this turn gave up its reservation ``[start, end)``."""
        self._released = (start, end)

    def placed(self, start: float, end: float) -> None:
        """The job of this turn took ``[start, end)`` (a start or a
        reservation)."""
        self._placed = (start, end)

    def _settle(self) -> None:
        released, placed = self._released, self._placed
        self._released = self._placed = None
        if released is None:
            return
        start, end = released
        if placed is None or placed[0] > start:
            lighter = start
        elif placed[1] < end:
            lighter = max(start, placed[1])
        else:
            return  # the new slot covers the old one
        first, last = self.since_begin
        self.since_begin = (min(first, lighter), max(last, end))
        self._log.append((len(self._turns) - 1, lighter, end))

    def close(self, pending) -> Lightening:
        """End the pass (complete or cut short); return what the next
        pass needs."""
        self._settle()
        after, log, turns = self.after, self._log, self._turns
        # A turn's span covers the log entries of the turns after it, so
        # the turns between two logged ones share a span: set per run of
        # turns (the earliest turn of a job seen twice is set last).
        first, last, k = INF, -INF, len(log) - 1
        hi = len(turns)
        while hi > 0:
            lo = max(log[k][0], 0) if k >= 0 else 0
            if lo < hi:
                after.update(dict.fromkeys(turns[lo:hi], (first, last)))
            while k >= 0 and log[k][0] >= lo:
                first = min(first, log[k][1])
                last = max(last, log[k][2])
                k -= 1
            hi = lo
        # Jobs a pass cut short did not reach: their last turn was before.
        begin_first, begin_last = self.since_begin
        for jobid, (first, last) in self._before.items():
            if jobid not in after and jobid in pending:
                after[jobid] = (min(first, begin_first), max(last, begin_last))
        self._before = {}
        return self


class Carried:
    """What an unlimited-depth pass keeps so that the next one need not
    build its profile from every running job and reservation again.

    When the pass ends (complete or cut short), *base* is its profile
    without the jobs it started: the running jobs as they were when the
    planner's releases were marked (:meth:`~flux_sched_base.releases.
    Releases.mark`, as the pass built its profile) and the reservations
    held as the pass ended, *promises*.  The next pass reads it from its own now and
    applies what changed since: the running jobs' totals (:meth:`~flux_
    sched_base.releases.Releases.changes`, the starts of the pass among
    them, with their exact ends) and the reservations held now against
    *promises*.  That is exact by construction.  *end_position* is the
    releases' position when the pass ended: what changed after it, and
    reservations let go after it, made the plan lighter between the passes.
    """

    def __init__(self, unit: str):
        self.unit = unit
        self.base = None
        self.end_position: int | None = None
        self.promises: dict | None = None
