"""Aggregate resource usage over time, for pruning before the allocator runs.

A :class:`Profile` is a step function of what the items of a plan use at
each future instant (running jobs from now until they end, reservations
from their start to their end), counted four ways:

- cores, GPUs: summed over items;
- *full* nodes: nodes an item uses every core of, summed over items;
- *busy* nodes: nodes at least one item uses, counted once however many
  items share them (kept exact with per-rank coverage intervals).

It cannot say whether a request fits (that depends on which ranks and cores
are free, on properties and constraints), but it can say cheaply when a
request certainly does *not* fit: when the cores, GPUs, non-full nodes or
idle nodes left over somewhere in the request's window are fewer than the
request needs.  The planner uses it to skip candidate start times before it
asks the pool's allocator.

Every count is an upper bound on what is free: capacity is everything the
instance ever had (down or removed ranks included) and usage counts every
item, so a pruned time is always a time at which the request cannot fit.
"""

from __future__ import annotations

import bisect
import math
import operator
from collections.abc import Iterable, Iterator
from itertools import accumulate, repeat

from sortedcontainers import SortedDict, SortedList

INF = math.inf

#: A usage vector: (cores, gpus, full nodes, nodes touched).
Vec = tuple[int, int, int, int]

_ZERO = (0, 0, 0, 0)


def _union(intervals: list) -> list:
    merged: list = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            if end > merged[-1][1]:
                merged[-1][1] = end
        else:
            merged.append([start, end])
    return merged


class Profile:
    """Step function of usage over time.

    Running items (``start`` None) use resources from before now until
    their end; reservations from their start until their end.  Times are
    seconds since the epoch; an end of ``math.inf`` never comes.

    When items are added with their *ranks*, the fourth count is the exact
    number of busy nodes.  Without ranks it is the item's own node count,
    summed; :meth:`candidates` subtracts such a profile (*minus*) from one
    with ranks, which can only under-count busy nodes: still an upper bound
    on what is free.

    Args:
        capacity: total (cores, gpus, nodes, nodes) of the instance.
    """

    def __init__(self, capacity: Vec = _ZERO):
        self.capacity = capacity
        #: Usage before any breakpoint: running items.
        self.base = [0, 0, 0, 0]
        # time -> [dcores, dgpus, dfull, dbusy, refcount]
        self._deltas: SortedDict = SortedDict()
        # time -> number of items ending then (candidate start times)
        self._ends: dict[float, int] = {}
        # Start times of the items that do not start at -inf (reservations):
        # usage rises only there.
        self._starts = SortedList()
        # rank -> [(start, end)] of the items using it (start -inf: running)
        self._cover: dict[int, list] = {}
        # rank -> how many of those are reservations (start after -inf)
        self._cover_reserved: dict[int, int] = {}
        # rank -> the latest end of its items, kept while only running
        # items use it (see _running_cover_change)
        self._cover_latest: dict[int, float] = {}
        #: Incremented on every change.
        self.version = 0
        self._prefix_cache = None
        self._table_cache = None
        # (t, dcores, dgpus, dfull, dbusy) of every bump since the cached
        # table was built, while there are few (see _usage_at); else None.
        self._since_table: list | None = None

    def __len__(self) -> int:
        """Number of breakpoints (the profile size reported in statistics)."""
        return len(self._deltas)

    # -- changes ---------------------------------------------------------------

    def _note_bump(self, t: float, vec, sign: int) -> None:
        since = self._since_table
        if since is not None:
            if len(since) >= self.BUMPS_KEPT:
                self._since_table = None
            else:
                since.append(
                    (t, sign * vec[0], sign * vec[1], sign * vec[2], sign * vec[3])
                )

    def _bump(self, t: float, vec, sign: int) -> None:
        """Add ``sign * vec`` at time *t* (-inf: the base) as one reference."""
        self._note_bump(t, vec, sign)
        if t == -INF:
            base = self.base
            for i, v in enumerate(vec):
                base[i] += sign * v
            return
        entry = self._deltas.get(t)
        if entry is None:
            entry = self._deltas[t] = [0, 0, 0, 0, 0]
        for i, v in enumerate(vec):
            entry[i] += sign * v
        entry[4] += 1

    def _unbump(self, t: float, vec, sign: int) -> None:
        """Undo a :meth:`_bump` with the same arguments."""
        self._note_bump(t, vec, -sign)
        if t == -INF:
            base = self.base
            for i, v in enumerate(vec):
                base[i] -= sign * v
            return
        entry = self._deltas[t]
        for i, v in enumerate(vec):
            entry[i] -= sign * v
        entry[4] -= 1
        if entry[4] == 0:
            del self._deltas[t]

    def _busy(self, start: float, end: float, undo: bool) -> None:
        one = (0, 0, 0, 1)
        apply = self._unbump if undo else self._bump
        apply(start, one, 1)
        if end != INF:
            apply(end, one, -1)

    def _cover_change(self, ranks: Iterable[int], interval, adding: bool) -> None:
        cover = self._cover
        reserved = self._cover_reserved
        running = interval[0] == -INF
        for rank in ranks:
            if not running:
                n = reserved.get(rank, 0) + (1 if adding else -1)
                if n:
                    reserved[rank] = n
                else:
                    del reserved[rank]
            intervals = cover.get(rank)
            # A rank no other item uses (the usual case for a starting or
            # ending job): its busy span is exactly this item's interval.
            if adding and not intervals:
                cover[rank] = [interval]
                self._cover_latest.pop(rank, None)
                self._busy(interval[0], interval[1], undo=False)
                continue
            if (
                not adding
                and intervals
                and len(intervals) == 1
                and intervals[0] == interval
            ):
                del cover[rank]
                self._cover_latest.pop(rank, None)
                self._busy(interval[0], interval[1], undo=True)
                continue
            # Another item with the same interval on the rank (jobs sharing a
            # node that end together): the busy span does not change.
            if adding and interval in intervals:
                intervals.append(interval)
                continue
            if not adding and intervals and intervals.count(interval) > 1:
                intervals.remove(interval)
                continue
            if running and rank not in reserved:
                # Only running jobs on the rank (a node shared by many):
                # its busy span is from before now to the latest end.
                self._running_cover_change(rank, intervals, interval, adding)
                continue
            self._cover_latest.pop(rank, None)
            intervals = cover.setdefault(rank, [])
            old = _union(intervals)
            if adding:
                intervals.append(interval)
            else:
                intervals.remove(interval)
                if not intervals:
                    del self._cover[rank]
            new = _union(intervals)
            if old == new:
                continue
            for start, end in new:
                self._busy(start, end, undo=False)
            for start, end in old:
                self._busy(start, end, undo=True)

    def _running_cover_change(self, rank, intervals, interval, adding) -> None:
        """:meth:`_cover_change` of one rank that holds only running items
        (and holds some after the change): the union of their spans is
        ``(-inf, latest end)``, so only the latest end is compared, and
        kept: it is read again only when the job ending last leaves."""
        latest = self._cover_latest
        old_end = latest.get(rank)
        if old_end is None:
            old_end = max(end for _, end in intervals)
        end = interval[1]
        if adding:
            intervals.append(interval)
            new_end = end if end > old_end else old_end
        else:
            intervals.remove(interval)
            new_end = old_end
            if end == old_end:
                new_end = max(end for _, end in intervals)
        latest[rank] = new_end
        if new_end != old_end:
            self._busy(-INF, new_end, undo=False)
            self._busy(-INF, old_end, undo=True)

    def add(
        self,
        start: float | None,
        end: float,
        vec: Vec,
        ranks: Iterable[int] | None = None,
    ) -> None:
        """Add an item using *vec* from *start* (None: running) until *end*.

        With *ranks*, busy nodes are counted exactly; without, ``vec[3]``
        is summed.
        """
        t0 = -INF if start is None else start
        counts = vec if ranks is None else (vec[0], vec[1], vec[2], 0)
        self._bump(t0, counts, 1)
        if start is not None:
            self._starts.add(start)
        if end != INF:
            self._bump(end, counts, -1)
            self._ends[end] = self._ends.get(end, 0) + 1
        if ranks is not None:
            self._cover_change(ranks, (t0, end), adding=True)
        self.version += 1

    def remove(
        self,
        start: float | None,
        end: float,
        vec: Vec,
        ranks: Iterable[int] | None = None,
    ) -> None:
        """Remove an item previously added with the same arguments."""
        t0 = -INF if start is None else start
        counts = vec if ranks is None else (vec[0], vec[1], vec[2], 0)
        self._unbump(t0, counts, 1)
        if start is not None:
            self._starts.remove(start)
        if end != INF:
            self._unbump(end, counts, -1)
            count = self._ends[end] - 1
            if count:
                self._ends[end] = count
            else:
                del self._ends[end]
        if ranks is not None:
            self._cover_change(ranks, (t0, end), adding=False)
        self.version += 1

    # -- queries ----------------------------------------------------------------

    def over_capacity(self) -> bool:
        """Does the usage exceed the capacity at some time (items that
        hold the same resources at once: reservations in conflict)?"""
        times, *columns = self._table()
        return any(
            max(column) > cap
            for column, cap in zip(columns[:2], self.capacity[:2], strict=True)
        )

    def next_end(self, t: float, strict: bool) -> float | None:
        """The first time at or after *t* (after it, if *strict*) at which
        some item ends: the times :meth:`candidates` may yield beyond its
        floor.  None if no item ends then."""
        ends = self._ends
        for u in self._deltas.irange(minimum=t, inclusive=(not strict, True)):
            if u in ends:
                return u
        return None

    def _steps(self, floor: float, minus: Profile | None, own) -> Iterator[tuple]:
        """Yield ``(t, cores, gpus, full, busy, is_end)`` from *floor* on.

        The first step starts at *floor*; each later one at a breakpoint.
        *minus* (a rank-less profile whose breakpoints are all breakpoints of
        this one) and *own* (``(start, end, vec)`` of one reservation in this
        profile) are left out.

        The queries read the same usage from :meth:`_usage` in bulk; this
        step-by-step reading is the definition the tests hold them to.
        """
        deltas = self._deltas
        mdeltas = minus._deltas if minus is not None else None
        c, g, n, b = self.base
        if minus is not None:
            mb = minus.base
            c, g, n, b = c - mb[0], g - mb[1], n - mb[2], b - mb[3]
        own_start = own_end = None
        if own is not None:
            own_start, own_end, ovec = own

        def apply(t, c, g, n, b):
            dv = deltas[t]
            c, g, n, b = c + dv[0], g + dv[1], n + dv[2], b + dv[3]
            if mdeltas is not None:
                mv = mdeltas.get(t)
                if mv is not None:
                    c, g, n, b = c - mv[0], g - mv[1], n - mv[2], b - mv[3]
            if t == own_start:
                c, g, n, b = c - ovec[0], g - ovec[1], n - ovec[2], b - ovec[3]
            if t == own_end:
                c, g, n, b = c + ovec[0], g + ovec[1], n + ovec[2], b + ovec[3]
            return c, g, n, b

        for t in deltas.irange(maximum=floor):
            c, g, n, b = apply(t, c, g, n, b)
        yield floor, c, g, n, b, True
        ends = self._ends
        for t in deltas.irange(minimum=floor, inclusive=(False, False)):
            c, g, n, b = apply(t, c, g, n, b)
            yield t, c, g, n, b, t in ends

    def _table(self) -> tuple[list, list, list, list, list]:
        """``(times, cores, gpus, full, busy)``: the usage in force from
        each time on, the first entry (time ``-inf``) before every
        breakpoint; cached until the profile changes.

        Every breakpoint is among the times; a time whose changes have all
        been undone may stay (the usage there is the one before it).
        """
        cache = self._table_cache
        if cache is not None and cache[0] == self.version:
            return cache[1]
        since = self._since_table
        if (
            cache is not None
            and since is not None
            and len(cache[1][0]) <= len(self._deltas) + self.STALE_TIMES
        ):
            table = _patched(cache[1], since)
        else:
            deltas = self._deltas
            times = [-INF, *deltas]
            values = list(map(deltas.__getitem__, times[1:]))
            table = (
                times,
                *(
                    list(accumulate(map(operator.itemgetter(k), values), initial=b))
                    for k, b in enumerate(self.base)
                ),
            )
        self._table_cache = (self.version, table)
        self._since_table = []
        return table

    #: Times a table patched from the changes since the last one may keep
    #: with nothing changing there any more; beyond, it is built afresh.
    STALE_TIMES = 64

    #: Bumps :meth:`_usage_at` adds to a stale table; beyond, it builds a
    #: new one.
    BUMPS_KEPT = 48

    def _usage_at(self, points: list[float]) -> list[tuple]:
        """The usage in force at each of *points*.

        A change bumps a few times; rebuilding the table after each costs
        a step per breakpoint (every running job), where a few reads of the
        last table plus the bumps since cost a few steps: easy's backfill
        changes the profile with every start and then asks about one or
        two times.
        """
        cache = self._table_cache
        since = self._since_table
        if cache is None or since is None:
            self._table()  # too many bumps to add up (or none kept)
            cache, since = self._table_cache, ()
        times, *columns = cache[1]
        out = []
        for t in points:
            k = bisect.bisect_right(times, t) - 1
            c, g, n, b = (column[k] for column in columns)
            for u, dc, dg, dn, db in since:
                if u <= t:
                    c, g, n, b = c + dc, g + dg, n + dn, b + db
            out.append((c, g, n, b))
        return out

    def _usage(self, minus: Profile | None) -> tuple[list, ...]:
        """:meth:`_table` with *minus* left out (see :meth:`_steps`)."""
        table = self._table()
        if minus is None or not (minus._deltas or any(minus.base)):
            return table
        times, *columns = table
        if len(minus._deltas) > self.SEGMENTS_AT_MOST:
            # Every breakpoint of *minus* is one here: read its deltas at ours.
            zero = (0, 0, 0, 0)
            theirs = list(map(minus._deltas.get, times[1:], repeat(zero)))
            columns = [
                list(
                    map(
                        operator.sub,
                        column,
                        accumulate(map(operator.itemgetter(k), theirs), initial=b),
                    )
                )
                for k, (column, b) in enumerate(zip(columns, minus.base, strict=True))
            ]
            return (times, *columns)
        # A few breakpoints (a pass's first held reservations): subtract the
        # usage segment by segment, where it is not zero.
        columns = [list(column) for column in columns]
        left = [-x for x in minus.base]
        a = 0
        for t, delta in minus._deltas.items():
            b = bisect.bisect_left(times, t, a)
            _add(columns, left, a, b)
            left = [x - y for x, y in zip(left, delta[:4], strict=True)]
            a = b
        _add(columns, left, a, len(times))
        return (times, *columns)

    def candidates(
        self,
        floor: float,
        duration: float,
        need: Vec,
        *,
        include_floor: bool = True,
        limit: float = INF,
        minus: Profile | None = None,
        own=None,
        horizon: float = INF,
        within: list[tuple[float, float]] | None = None,
    ) -> Iterator[float]:
        """Yield start times, ascending, at which *need* may fit.

        Candidates are *floor* (if *include_floor*) and every time after it
        at which some item ends, below *limit*: a request that fits nowhere
        else can only start fitting when something ends.  A candidate is
        yielded unless the counts left over somewhere in its window
        ``[t, t + duration)`` (``duration`` 0: forever) are too small for
        *need* (cores, gpus, non-full nodes, idle nodes).  The caller then
        asks the allocator; a failure there just moves on to the next
        candidate.  A window never extends past *horizon* (the instance
        expiration, when there is one).  *within* (sorted, disjoint closed
        intervals) keeps only the candidates inside them; the steps between
        them are skipped, not read.
        """
        cap = self.capacity
        thr_c, thr_g, thr_n, thr_b = (cap[i] - need[i] for i in range(4))
        if min(thr_c, thr_g, thr_n, thr_b) < 0:
            return
        times, cores, gpus, full, busy = self._usage(minus)
        # The job's own reservation is read as room, not usage: the steps
        # it covers, own_first up to own_stop - 1, fit with thresholds
        # raised by its vector (no copy of the table for each search).
        own_first = own_stop = 0
        if own is not None:
            own_first = bisect.bisect_left(times, own[0])
            own_stop = bisect.bisect_left(times, own[1])
            own_c, own_g, own_n, own_b = (
                thr_c + own[2][0],
                thr_g + own[2][1],
                thr_n + own[2][2],
                thr_b + own[2][3],
            )
        ends = self._ends
        n = len(times)
        highs = None if within is None else [v for _, v in within]
        first = bisect.bisect_right(times, floor) - 1  # the step holding floor
        i = first
        good = first  # steps from i up to good are known to fit
        while i < n:
            t = floor if i == first else times[i]
            if t >= limit:
                return
            if (i == first and not include_floor) or (i != first and t not in ends):
                i += 1
                continue
            if highs is not None:
                j = bisect.bisect_left(highs, t)  # first interval ending at t or later
                if j == len(highs):
                    return
                low = within[j][0]
                if low > t:
                    i = bisect.bisect_left(times, low, i + 1)
                    continue
            tend = _window_end(t, duration, horizon)
            # The window's steps: i up to stop - 1 (times below tend).
            stop = bisect.bisect_left(times, tend, i + 1)
            k = good if good > i else i
            # Two spelled-out tests, not one over chosen thresholds: this
            # loop is the hot path of every search (a tuple per step cost
            # fifo 2-4% at load 1.93).
            while k < stop:
                if own_first <= k < own_stop:
                    if (
                        cores[k] <= own_c
                        and gpus[k] <= own_g
                        and full[k] <= own_n
                        and busy[k] <= own_b
                    ):
                        k += 1
                        continue
                elif (
                    cores[k] <= thr_c
                    and gpus[k] <= thr_g
                    and full[k] <= thr_n
                    and busy[k] <= thr_b
                ):
                    k += 1
                    continue
                break
            if k < stop:
                # Every candidate up to step k has step k in its window.
                i = k + 1
                continue
            good = stop
            yield t
            i += 1

    #: :meth:`candidates` leaves out a *minus* profile of at most this many
    #: breakpoints segment by segment; beyond, by reading its deltas at
    #: every breakpoint here.
    SEGMENTS_AT_MOST = 32

    #: :meth:`fits_from` reads the usage at each rise in the window while
    #: there are at most this many; beyond, a table of prefix maxima.
    POINTS_AT_MOST = 16

    def fits_from(
        self,
        floor: float,
        duration: float,
        need: Vec,
        horizon: float = INF,
        own=None,
    ) -> bool:
        """True if the counts allow *need* during ``[floor, floor+duration)``.

        Usage rises only where a reservation starts, so its maximum over
        the window is at *floor* or at one of those starts: with few of
        them in the window, those steps alone are read.  Otherwise a
        prefix-maximum table, cached per (*floor*, profile version), makes
        a scan over many jobs at the same *floor* cost a binary search per
        job.  *own* (``(start, end, vec)`` of one reservation in this
        profile) is left out as in :meth:`candidates`: room while it lasts,
        so its end is a time to read too.
        """
        tend = _window_end(floor, duration, horizon)
        cap = self.capacity
        rises = self._starts.bisect_left(tend) - self._starts.bisect_right(floor)
        if rises <= self.POINTS_AT_MOST:
            points = [
                floor,
                *self._starts.irange(floor, tend, inclusive=(False, False)),
            ]
            if own is not None and floor < own[1] < tend:
                points.append(own[1])
            usage = self._usage_at(points)
            if own is not None:
                start, end, vec = own
                usage = [
                    tuple(u[i] - vec[i] for i in range(4)) if start <= t < end else u
                    for t, u in zip(points, usage, strict=True)
                ]
            return all(u[i] + need[i] <= cap[i] for u in usage for i in range(4))
        if own is not None:
            found = self.candidates(
                floor,
                duration,
                need,
                limit=math.nextafter(floor, INF),
                own=own,
                horizon=horizon,
            )
            return next(found, None) is not None
        cache = self._prefix_cache
        if cache is None or cache[0] != self.version or cache[1] != floor:
            times, *columns = self._table()
            first = bisect.bisect_right(times, floor) - 1  # the step holding floor
            # Per column, built when first asked: the usage's maximum from
            # floor on, and its prefix maxima (the usage over a window).
            cache = (self.version, floor, times, first, columns, [None] * 4, [None] * 4)
            self._prefix_cache = cache
        _, _, times, first, columns, peaks, maxima = cache
        # The last step of the window: the last one before tend.
        j = bisect.bisect_left(times, tend, first + 1) - 1 - first
        for i in range(4):
            if need[i] == 0:
                # Nothing asked of this column (GPUs, whole nodes for a
                # slot): it only matters where usage exceeds capacity.
                if peaks[i] is None:
                    peaks[i] = max(columns[i][first:])
                if peaks[i] <= cap[i]:
                    continue
            if maxima[i] is None:
                maxima[i] = list(accumulate(columns[i][first:], max))
            if maxima[i][j] + need[i] > cap[i]:
                return False
        return True

    def free_now_upper(self) -> Vec:
        """Upper bound on what is free now (capacity minus running usage)."""
        cap, base = self.capacity, self.base
        return tuple(cap[i] - base[i] for i in range(4))


def _patched(table: tuple, bumps: list) -> tuple:
    """A copy of *table* with *bumps* (``(t, dcores, dgpus, dfull,
    dbusy)``, t -inf for the usage before every breakpoint) applied.

    A change bumps the usage at its start and back at its end: applied
    in time order, only the entries between them change, where building
    the table reads every breakpoint.
    """
    times, *columns = (list(x) for x in table)
    bumps = sorted(bumps, key=operator.itemgetter(0))
    for t in sorted({b[0] for b in bumps if b[0] != -INF}):
        k = bisect.bisect_left(times, t)
        if k == len(times) or times[k] != t:
            times.insert(k, t)
            for column in columns:
                column.insert(k, column[k - 1])
    at = [0 if b[0] == -INF else bisect.bisect_left(times, b[0]) for b in bumps]
    at.append(len(times))
    total = [0, 0, 0, 0]
    for j, (_, *delta) in enumerate(bumps):
        total = [x + y for x, y in zip(total, delta, strict=True)]
        _add(columns, total, at[j], at[j + 1])
    return (times, *columns)


def _add(columns: list, vec, a: int, b: int) -> None:
    """Add *vec* (one value per column) to entries *a* to *b* - 1."""
    if a >= b:
        return
    for column, value in zip(columns, vec, strict=True):
        if value:
            column[a:b] = map(operator.add, column[a:b], repeat(value, b - a))


def _window_end(t: float, duration: float, horizon: float) -> float:
    end = t + duration if duration > 0.0 else INF
    end = min(end, horizon)
    return end if end > t else INF
