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


def _searched_until(entry: tuple) -> float:
    return entry[3]


class KeptSearches:
    """Holders of a pass whose search for an earlier start found none, on
    one profile (the same object) as holds change it.

    A holder asking no less than one of them (as many units or more, a
    window as long or longer, its reservation as late or later) finds no
    start before the time that one searched up to either: each of its
    candidate starts before then fell inside a step that was one of the
    other's candidates or inside the window of one, and its window there,
    cut at its own later start, reaches the step that held the other's
    window back (both reservations are held in the profile).  So it
    searches only from that time on (:meth:`searched_until`), and not at
    all if it searches no further.

    Holds in between only take nodes, which keeps every such search
    fruitless, and add steps, which the argument above already counts
    with.  A release makes the profile lighter from its start on
    (:attr:`~flux_sched_base.counts.NodeProfile.released_from`): a search
    whose windows all end before that (at its own reservation's start) is
    still fruitless; the others are forgotten.  Up to :attr:`KEPT` of them,
    none implied by another.  A search reads the profile's steps; on a
    short profile (fewer than :attr:`MIN_STEPS`: a short queue) it costs
    less than asking here would, and nothing is kept.
    """

    KEPT = 16
    MIN_STEPS = 2048

    def __init__(self):
        self.profile = None
        self.releases_read = 0  # of the profile's released_from
        self.failed: list[tuple[int, float, float, float]] = []

    def _follow(self, profile) -> None:
        """Forget what *profile*'s releases since the last look (or another
        profile) may have made possible."""
        released = profile.released_from or ()
        if profile is not self.profile:
            self.profile, self.releases_read, self.failed = profile, len(released), []
        elif len(released) > self.releases_read:
            lightest = min(released[self.releases_read :])
            self.releases_read = len(released)
            self.failed = [entry for entry in self.failed if entry[2] <= lightest]

    def searched_until(self, profile, nodes: int, span: float, start: float) -> float:
        """The latest time before which searches that found no earlier
        start rule out every start of this one (``-inf``: none does).
        *span* is the window's length (``inf`` for no limit), *start* the
        holder's reservation."""
        if len(profile.t) < self.MIN_STEPS:
            return -INF
        self._follow(profile)
        for n, d, s, b in self.failed:  # the furthest searched first
            if nodes >= n and span >= d and start >= s:
                return b
        return -INF

    def add(self, nodes: int, span: float, start: float, before: float) -> None:
        """Record a search that found no earlier start (just after
        :meth:`searched_until` was asked for it, the profile unchanged)."""
        if self.profile is None or len(self.profile.t) < self.MIN_STEPS:
            return
        self.failed = [
            (n, d, s, b)
            for n, d, s, b in self.failed
            if not (n >= nodes and d >= span and s >= start and b <= before)
        ]
        self.failed.append((nodes, span, start, before))
        self.failed.sort(key=_searched_until, reverse=True)
        del self.failed[self.KEPT :]  # those searched the least far


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
