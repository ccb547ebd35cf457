"""Interchangeable units: a count-based availability profile.

Two kinds of request make which resources a job gets matter to no one
else, so that only *how many* units are free at each instant does:

- **whole nodes**: every node a request may use is taken whole (an
  exclusive request; a request whose per-node share is all of a node's
  cores; slots of one node's worth of cores on a machine of identical
  nodes).  Any free node will do (:func:`whole_nodes`).
- **cores**: one-core slots with no node level, no GPUs, no constraint
  (``flux run -n N`` on a machine of any shape).  The pool's allocator
  takes free cores wherever they are, so *N* free cores anywhere will do
  (:func:`core_count`).

A plan of requests of one kind is feasible exactly when, at every instant,
the units its items hold do not outnumber the free ones: units chosen when
each job starts always realize it.  This is the model of the textbook
definitions of EASY and conservative backfilling, so planning with counts
reproduces them exactly, and a reservation is a promise of a start time
and a number of units, never of particular ranks.

- :func:`whole_nodes` and :func:`core_count` say whether a request is of
  either kind on a given machine, and how many units it takes;
- :class:`NodeProfile` is the step function of free units over time,
  built from the running jobs at the start of a pass (whole free nodes
  with :meth:`NodeProfile.from_plan`, free cores with
  :meth:`NodeProfile.from_cores`); a pass then *holds* its starts and
  reservations in it and asks :meth:`NodeProfile.fits` and
  :meth:`NodeProfile.earliest`;
- :class:`OrderedHolds` places windows one after another on a profile,
  each from no earlier than the last one's start (a forecast).
"""

from __future__ import annotations

import bisect
import itertools
import math
import operator
from collections.abc import Callable, Iterable

INF = math.inf


def _fixed(count) -> bool:
    """True if an RFC 14 count (or None) is a single value."""
    if count is None:
        return True
    return getattr(count, "_values", None) is None and count.min == count.max


def machine_of(node_cores: dict, node_gpus: dict) -> tuple[frozenset, int]:
    """What :func:`whole_nodes` needs to know of a machine: the set of core
    counts of its nodes and the fewest GPUs any node has."""
    least_gpus = min((node_gpus.get(rank, 0) for rank in node_cores), default=0)
    return frozenset(node_cores.values()), least_gpus


def core_count(request) -> int | None:
    """The number of cores *request* takes if it is one-core slots with no
    node level, no GPUs, no constraint and a fixed count (so that any
    free cores will do), else None."""
    try:
        if (
            request.constraint
            or request.exclusive
            or request.slot_size != 1
            or request.gpu_per_slot
            or request.nnodes
            or request.node_count is not None
            or not _fixed(request.slot_count)
        ):
            return None
        nslots = request.nslots
    except AttributeError:
        return None
    return nslots if nslots >= 1 else None


def whole_nodes(
    request, node_cores: dict, node_gpus: dict, machine: tuple | None = None
) -> int | None:
    """The number of whole nodes *request* takes, or None if it is not
    a whole-node request on every node of this machine.

    A request counts in whole nodes when it has no constraint, fixed counts
    (no RFC 14 ranges), any node can host one node's share of it, and that
    share leaves nothing another job could use (all of the node's cores).
    *node_cores* and *node_gpus* map every rank to its core and GPU counts;
    *machine*, if given, is :func:`machine_of` them, computed once.
    """
    try:
        constraint = request.constraint
        exclusive = request.exclusive
        slot_size = request.slot_size
        gpu_per_slot = request.gpu_per_slot
        nnodes = request.nnodes
        nslots = request.nslots
        node_count, slot_count = request.node_count, request.slot_count
    except AttributeError:
        return None
    if constraint or not node_cores or slot_size <= 0:
        return None
    if not (_fixed(node_count) and _fixed(slot_count)):
        return None
    cores, least_gpus = machine or machine_of(node_cores, node_gpus)
    if exclusive:
        if min(cores) < slot_size or gpu_per_slot > least_gpus or nnodes < 1:
            return None
        return nnodes
    if len(cores) != 1:
        return None
    (node,) = cores
    if nnodes > 0:
        per_node = nslots // nnodes
        if per_node * slot_size != node or per_node * gpu_per_slot > least_gpus:
            return None
        return nnodes
    if slot_size != node or gpu_per_slot > least_gpus or nslots < 1:
        return None
    return nslots


class NodeProfile:
    """Free units (whole nodes, or cores) from *now* on, as a step function.

    ``t[i]`` and ``f[i]``: from ``t[i]`` until ``t[i + 1]``, ``f[i]`` units
    are free in the plan.  ``t[0]`` is now.  Items are *held* with
    :meth:`hold`; every question respects every held item.  The docs of
    the methods say "nodes" for units.

    Args:
        now: the pass's time.
        free_now: up units that no running job uses now.
        releases: for each other up unit, when its last running job is
            planned to end (``math.inf``: never); times at or before *now*
            (a job past its planned end) count as free in the plan from now,
            but not as free now for :meth:`fits_now`.  Either one time per
            unit, or ``(time, units)`` pairs.
    """

    def __init__(self, now: float, free_now: int, releases: Iterable):
        self.now = now
        late = 0
        held = 0
        steps: dict[float, int] = {}
        for release in releases:
            end, units = release if isinstance(release, tuple) else (release, 1)
            held += units
            if end <= now:
                late += units
            elif end != INF:
                steps[end] = steps.get(end, 0) + units
        self.t = [now]
        self.f = [free_now + late]
        free = free_now + late
        for when in sorted(steps):
            free += steps[when]
            self.t.append(when)
            self.f.append(free)
        #: Nodes free now that no start of this pass has taken.
        self.free_now = free_now
        #: Up units (the most any request can ever get).
        self.capacity = free_now + held

    @classmethod
    def from_totals(cls, now: float, free_now: int, totals: dict) -> NodeProfile:
        """Build from *totals*, ``{planned end: units released then}``:
        what ``NodeProfile(now, free_now, totals.items())`` builds, with
        the per-release loop left to C (sort and running sum)."""
        ends = sorted(totals)
        late_until = bisect.bisect_right(ends, now)
        finite_until = bisect.bisect_left(ends, INF, late_until)
        late = sum(map(totals.__getitem__, ends[:late_until]))
        steps = ends[late_until:finite_until]
        new = object.__new__(cls)
        new.now, new.free_now = now, free_now
        new.capacity = free_now + sum(totals.values())
        new.t = [now, *steps]
        new.f = list(
            itertools.accumulate(
                map(totals.__getitem__, steps), initial=free_now + late
            )
        )
        return new

    @classmethod
    def from_plan(cls, now: float, up: Iterable[int], running: Iterable) -> NodeProfile:
        """Build from the up ranks and the running items of a plan (each
        with ``ranks`` and ``end``)."""
        busy: dict[int, float] = {}
        for item in running:
            for rank in item.ranks:
                if busy.get(rank, -INF) < item.end:
                    busy[rank] = item.end
        free_now = 0
        releases = []
        for rank in up:
            end = busy.get(rank)
            if end is None:
                free_now += 1
            else:
                releases.append(end)
        return cls(now, free_now, releases)

    @classmethod
    def from_cores(
        cls, now: float, up: Iterable[int], node_cores: dict, running: Iterable
    ) -> NodeProfile:
        """Free cores over time: build from the up ranks, their core
        counts, and the running items of a plan (each with ``ranks``, a
        map ``rank -> (cores, gpus)``, and ``end``)."""
        up = set(up)
        busy = 0
        releases = []
        for item in running:
            cores = sum(len(c) for rank, (c, _) in item.ranks.items() if rank in up)
            if cores:
                busy += cores
                releases.append((item.end, cores))
        free_now = sum(node_cores.get(rank, 0) for rank in up) - busy
        return cls(now, free_now, releases)

    def __len__(self) -> int:
        return len(self.t)

    def _index(self, when: float) -> int:
        """Index of the step holding *when* (``when >= now``)."""
        return bisect.bisect_right(self.t, when) - 1

    def _split(self, when: float) -> int:
        """Make *when* a breakpoint; return its index."""
        i = self._index(when)
        if self.t[i] == when:
            return i
        self.t.insert(i + 1, when)
        self.f.insert(i + 1, self.f[i])
        return i + 1

    def copy(self) -> NodeProfile:
        """An independent copy."""
        new = object.__new__(NodeProfile)
        new.now, new.free_now, new.capacity = self.now, self.free_now, self.capacity
        new.t, new.f = list(self.t), list(self.f)
        return new

    def advanced(self, now: float) -> NodeProfile:
        """A new profile: this one read from a later *now* (the steps
        before it dropped); ``free_now`` is left for the caller to set."""
        i = self._index(now)
        new = object.__new__(NodeProfile)
        new.now, new.free_now, new.capacity = now, self.free_now, self.capacity
        new.t = [now, *self.t[i + 1 :]]
        new.f = self.f[i:]
        return new

    def steps(self) -> tuple[list[float], list[int]]:
        """The step function without repeated values: ``(times, free)``,
        each time the start of a change (for comparing two profiles)."""
        t: list[float] = []
        f: list[int] = []
        for when, free in zip(self.t, self.f, strict=True):
            if not f or f[-1] != free:
                t.append(when)
                f.append(free)
        return t, f

    def compacted(self) -> NodeProfile:
        """A new profile: the same step function without the breakpoints
        at which the free count does not change."""
        t, f = self.t, self.f
        keep = [True, *map(operator.ne, f[1:], f)]  # f[i] != f[i - 1]
        new = object.__new__(NodeProfile)
        new.now, new.free_now, new.capacity = self.now, self.free_now, self.capacity
        new.t, new.f = (
            list(itertools.compress(t, keep)),
            list(itertools.compress(f, keep)),
        )
        return new

    #: Where :meth:`hold` (and so :meth:`move`) made this object lighter:
    #: the start of each release, in order (None: none yet).  Holds only
    #: take nodes elsewhere, so no instant before the earliest of these
    #: has more nodes free than when a question was answered.
    released_from: list[float] | None = None

    def hold(self, start: float, end: float, nodes: int) -> None:
        """Hold *nodes* whole nodes during ``[start, end)`` (the part of it
        from now on); a negative *nodes* releases them."""
        start = max(start, self.now)
        if end <= start:
            return
        if nodes < 0:
            if self.released_from is None:
                self.released_from = []
            self.released_from.append(start)
        if start == self.now:
            self.free_now -= nodes
        i = self._split(start)
        k = self._split(end) if end != INF else len(self.t)
        f = self.f
        f[i:k] = [x - nodes for x in f[i:k]]

    def move(
        self, start: float, end: float, new_start: float, new_end: float, nodes: int
    ) -> None:
        """What ``hold(start, end, -nodes)`` and then ``hold(new_start,
        new_end, nodes)`` do, holding only the differences between the
        two spans: between the starts, and between the ends (a reservation
        moved a little touches few steps).  Holding is linear, so this is
        exact for any two spans, before now or disjoint included."""
        if start != new_start:
            self.hold(
                min(start, new_start),
                max(start, new_start),
                nodes if new_start < start else -nodes,
            )
        if end != new_end:
            self.hold(
                min(end, new_end), max(end, new_end), nodes if end < new_end else -nodes
            )

    def adjusted(self, holds: Iterable[tuple[float, float, int]]) -> NodeProfile:
        """A new profile: this one with every ``(start, end, nodes)`` of
        *holds* held as by :meth:`hold` (negative *nodes* release).

        One sweep over both, so holding *m* items costs about
        ``O((len + m) log(len + m))`` rather than *m* passes over the steps.
        """
        now = self.now
        delta: dict[float, int] = {}
        free_now = self.free_now
        for start, end, nodes in holds:
            start = max(start, now)
            if end <= start or not nodes:
                continue
            if start == now:
                free_now -= nodes
            delta[start] = delta.get(start, 0) - nodes
            if end != INF:
                delta[end] = delta.get(end, 0) + nodes
        new = object.__new__(NodeProfile)
        new.now, new.free_now, new.capacity = now, free_now, self.capacity
        new.t, new.f = list(self.t), list(self.f)
        if len(delta) <= 4:
            # A few changes: cheaper one by one than by a sweep of all steps.
            for when in sorted(delta):
                i = new._split(when)
                new.f[i:] = [x + delta[when] for x in new.f[i:]]
            return new
        old_t, old_f = self.t, self.f
        times = sorted(set(old_t).union(delta))
        t: list[float] = []
        f: list[int] = []
        i, n = -1, len(old_t)
        shift = 0
        for when in times:
            while i + 1 < n and old_t[i + 1] <= when:
                i += 1
            shift += delta.get(when, 0)
            free = old_f[i] + shift
            if f and f[-1] == free:
                continue  # no change here: not a breakpoint
            t.append(when)
            f.append(free)
        new.t, new.f = t, f
        return new

    def free_before(self, when: float, nodes: int) -> bool:
        """Are *nodes* nodes free at some instant in ``[now, when)``?"""
        return self.first_free(when, nodes) is not None

    def first_free(self, before: float, nodes: int) -> float | None:
        """The first instant in ``[now, before)`` at which *nodes* nodes
        are free, or None.

        Read from now on and stops at the first such instant, which for a
        small request is usually near now.  No start before it can fit,
        so it is a floor for :meth:`earliest`.
        """
        f = self.f
        stop = bisect.bisect_left(self.t, before)
        i = 0
        while i < stop and f[i] < nodes:
            i += 1
        return self.t[i] if i < stop else None

    def lighter_span(
        self, before: NodeProfile, until: float = INF
    ) -> tuple[float, float]:
        """Where more nodes are free here than in *before* (an earlier
        profile of the same nodes, from an earlier or the same now), from
        now until *until*: ``(first, last)``, the first instant that has
        more free and the end of the last stretch that does (``math.inf``
        if it lasts until *until* or forever); ``(math.inf, -math.inf)`` if
        there is none."""
        t, f = self.t, self.f
        bt, bf = before.t, before.f
        j = bisect.bisect_right(bt, t[0]) - 1
        if j < 0:
            return t[0], INF  # *before* says nothing about now
        i, n, m = 0, len(t), len(bt)
        when = t[0]
        first, last = INF, -INF
        lighter = False
        while True:
            if f[i] > bf[j]:
                if not lighter:
                    lighter = True
                    if first == INF:
                        first = when
            elif lighter:
                lighter = False
                last = when
            mine = t[i + 1] if i + 1 < n else INF
            theirs = bt[j + 1] if j + 1 < m else INF
            when = mine if mine < theirs else theirs
            if when >= until:
                return first, (INF if lighter else last)
            if mine == when:
                i += 1
            if theirs == when:
                j += 1

    def min_over(self, start: float, end: float) -> int:
        """Fewest nodes free at any instant in ``[start, end)`` (from now)."""
        t, f = self.t, self.f
        i = self._index(max(start, self.now))
        least = f[i]
        i += 1
        n = len(t)
        while i < n and t[i] < end:
            if f[i] < least:
                least = f[i]
            i += 1
        return least

    def lowest(self) -> int:
        """Fewest nodes free at any instant from now on (negative where
        held items overcommit the nodes)."""
        return min(self.f)

    def fits(self, start: float, end: float, nodes: int) -> bool:
        """Are *nodes* whole nodes free throughout ``[start, end)``?"""
        t, f = self.t, self.f
        i = self._index(max(start, self.now))
        n = len(t)
        while i < n and t[i] < end:
            if f[i] < nodes:
                return False
            i += 1
        return True

    def fits_now(self, end: float, nodes: int) -> bool:
        """Can *nodes* whole nodes start now and stay until *end*?"""
        return self.free_now >= nodes and self.fits(self.now, end, nodes)

    def earliest(
        self,
        nodes: int,
        window_end: Callable[[float], float],
        floor: float | None = None,
        include_floor: bool = True,
        before: float = INF,
        cap: float = INF,
    ) -> float | None:
        """The earliest time at or after *floor* (default now) from which
        *nodes* whole nodes stay free until ``window_end(time)`` (or *cap*,
        if that comes first).

        Candidates are *floor* (if *include_floor*) and every later
        breakpoint before *before*; *window_end* must not decrease with its
        argument.  None if no time works (nodes down or held by jobs that
        never end).
        """
        t, f = self.t, self.f
        floor = self.now if floor is None else max(floor, self.now)
        n = len(t)
        i = self._index(floor)
        when = floor
        if not include_floor:
            i += 1
            if i >= n:
                return None
            when = t[i]
        stop = n if before == INF else bisect.bisect_left(t, before)
        if when >= before:
            return None
        find = bisect.bisect_left
        # A candidate's window is checked from its far end backwards: the
        # last too-full step k in it lies in the window of every candidate
        # up to k as well (windows never end earlier for a later start), so
        # the next candidate comes after k.  Steps of the window after k
        # were seen to be free enough and are not read again (``good``).
        good = i
        while True:
            if f[i] < nodes:
                i += 1
                while i < stop and f[i] < nodes:
                    i += 1
                if i >= stop:
                    return None
                when = t[i]
            end = window_end(when)
            k = find(t, end if end < cap else cap, i) - 1
            last = k
            lo = good if good > i else i
            while k >= lo and f[k] >= nodes:
                k -= 1
            if k < lo:
                return when
            good = last + 1
            i = k + 1
            if i >= stop:
                return None
            when = t[i]


class OrderedHolds:
    """A :class:`NodeProfile` that holds one window after another, each
    found from a floor no earlier than the last one's start: a forecast
    placing queued jobs in order (:meth:`place`).

    While every window so far, and the one asked for, reaches the
    profile's last step, each covers all the steps from its start to that
    one, so from the latest start until then every hold so far is in
    force: a start fits exactly where the fewest units free from it to
    the last step, less the units held, still leave the request's (and
    the last step, less them, leaves enough).  Those fewest
    (suffix minima, read once per profile) never fall with time, so the
    earliest start is a bisection and the holds wait in a list until the
    profile itself is read (:attr:`profile`).  Any other question is
    answered by :meth:`NodeProfile.earliest` and :meth:`NodeProfile.hold`
    on the profile with every hold in it, as the same sequence of holds
    would leave it.
    """

    def __init__(self, profile: NodeProfile) -> None:
        self._profile = profile
        # (start, end, units) of holds not yet made in the profile.
        self._pending: list[tuple[float, float, int]] = []
        self._held = 0  # their units
        self._latest = -INF  # their latest start
        # For the profile as it is: (fewest free from each step to the
        # last one; inf at the last), built when first needed.
        self._least: list | None = None

    @property
    def profile(self) -> NodeProfile:
        """The profile with every hold made so far."""
        profile = self._profile
        if self._pending:
            for start, end, units in self._pending:
                profile.hold(start, end, units)
            self._pending.clear()
            self._held = 0
            self._latest = -INF
            self._least = None
        return profile

    def place(
        self,
        units: int,
        window_end: Callable[[float], float],
        floor: float,
        include_floor: bool,
    ) -> tuple[float, float] | tuple[None, None]:
        """``(start, end)`` of the earliest window of *units* from *floor*
        (see :meth:`NodeProfile.earliest`), held from then on; ``(None,
        None)`` if there is none."""
        profile = self._profile
        if units > profile.capacity:
            return None, None
        start = self._earliest_past_last(units, window_end, floor, include_floor)
        if start is None:
            profile = self.profile
            start = profile.earliest(
                units, window_end, floor=floor, include_floor=include_floor
            )
            if start is None:
                return None, None
            end = window_end(start)
            profile.hold(start, end, units)
            self._least = None
            return start, end
        end = window_end(start)
        self._pending.append((start, end, units))
        self._held += units
        self._latest = start
        return start, end

    def _earliest_past_last(self, units, window_end, floor, include_floor):
        """The start :meth:`place` finds, when the holds so far and the
        window from *floor* reach the last step (see the class doc); None
        where that does not hold."""
        profile = self._profile
        t, f = profile.t, profile.f
        floor = max(floor, profile.now)
        last = t[-1]
        held = self._held
        if not (
            self._latest <= floor < last
            and window_end(floor) >= last
            and f[-1] - held >= units  # free after the last step
        ):
            return None
        least = self._least
        if least is None:
            least = list(itertools.accumulate(reversed(f[:-1]), min))
            least.reverse()
            least.append(INF)
            self._least = least
        i = profile._index(floor)
        # The first step from which the fewest free, less what is held,
        # leave *units*: there is one (the last step's is infinite).
        j = bisect.bisect_left(least, units + held, i)
        if j > i:
            return t[j]
        return floor if include_floor else t[i + 1]
