"""The rank-by-rank search for a request the allocator puts on one rank.

One slot, or one node, with no constraint: a rank can host such a job
from a time *t* exactly when the cores and GPUs its running jobs and the
respected reservations hold during the window leave room, and that only
gets better when one of that rank's own items ends.  So the earliest start
is found by reading each rank at the first time its running jobs allow
(:meth:`~flux_sched_base.planbook.PlanBook.rank_bounds`) and again after
each of its own ends, earliest first; R is the allocator's choice there,
read from the plan among the ranks that could have room (one slot of
cores on the reference pool) or else asked of it once.
:class:`~flux_sched_base.planner.Planner` asks this first and its general
search (count profile, then allocator probes) where this one cannot say.
:meth:`RankSearch.ranks_with_room` answers the cheaper question a
compression asks first: which of a few ranks could host the job at all
before its reservation.
"""

from __future__ import annotations

import bisect
import heapq
import math

from flux.resource import InfeasibleRequest, InsufficientResources

from flux_sched_base import availability
from flux_sched_base.planbook import PlanBook, parse_ranks
from flux_sched_base.pool import Rv1SummaryPool, lowest_free, room_left

INF = math.inf

#: What :meth:`RankSearch._earliest_one_rank` says when no rank can host
#: the request before the limit.
NO_START = ()

#: Marks an answer of :meth:`RankSearch._earliest_one_rank` whose R is
#: already on a late rank.
LATE = "late"


def _every_item(item) -> bool:
    """The view of a question that respects every item."""
    return True


def _tied_at(t: float, rank: int, heap: list, coming, fresh) -> list[int]:
    """*rank* and the ranks of :meth:`RankSearch._one_rank_start`'s search
    whose next time to read is *t* (in *heap*, or *coming* and then the
    rest of *fresh*): every other rank is next read later, and a rank
    gets room only at a time it is read, so none of those has room at
    *t*."""
    out = [rank]
    out.extend(other for key, other in heap if key == t)
    while coming is not None and coming[0] == t:
        out.append(coming[1])
        coming = next(fresh, None)
    return out


class RankSearch(PlanBook):
    """The one-rank search of the planner (see the module doc); the
    :class:`~flux_sched_base.planner.Planner` subclass provides the scratch
    copy (``_scratch``), the general search (``_earliest_by_candidates``)
    it falls back on and the ranks' free stretches (``_stretches_on``)."""

    _positions: tuple | None = None

    #: Answer every question ``earliest`` answers rank by rank for a
    #: one-rank request the general way as well, failing on a difference
    #: (tests).
    check_one_rank = False

    def _compare_one_rank(self, found, *question) -> None:
        """Fail unless the general search answers *question* as the one
        rank by rank did (*found*; tests: ``check_one_rank``)."""
        probes = self.probes  # the statistics count the answer's probes
        general = self._earliest_by_candidates(*question)
        self.probes = probes
        if found is NO_START:
            assert general is None, f"no start found, the general one {general[0]}"
        elif general is None or general[0] != found[0]:
            # Only a plan holding the same cores twice at once (held
            # reservations in conflict) has counts that refuse what
            # the allocator accepts: the general search skips it.
            assert general is None or general[0] > found[0], (
                f"one-rank search found {found[0]}, the general one {general[0]}"
            )
            assert self.profile.over_capacity(), (
                f"one-rank search found {found[0]}, the general one "
                f"{general and general[0]}, in a plan within capacity"
            )
        elif found[1] is None:
            pass  # a start now without R (bare_now): the times agree
        elif len(found) == 3:
            # R read from the plan on a late rank: the scratch copy's.
            jobid, request, _, _, _, exclude_held, _ = question[:7]
            t = found[0]
            considered = self._considered(jobid, exclude_held)
            self._scratch().goto(t, self.window_end(t, request.duration), considered)
            late = self._late_ranks(jobid, request, t, considered, general[1])
            self.probes = probes
            assert parse_ranks(late) == parse_ranks(found[1]), "late R differs"
        else:
            assert parse_ranks(general[1]) == parse_ranks(found[1]), "R differs"

    def _earliest_one_rank(
        self,
        jobid,
        request,
        floor,
        include_floor,
        limit,
        exclude_held,
        within,
        ranks,
        late=False,
        bare_now=False,
    ):
        """:meth:`earliest` for a request the allocator puts on one rank,
        found rank by rank: ``(t, R)``, :data:`NO_START`, or None where
        this way cannot say (then the general search answers).  With
        *late* (:meth:`earliest`'s *prefer_late*), a start after now may
        come as ``(t, R, LATE)``: R already on a late rank (see
        :meth:`_late_one_slot`); else R is the allocator's own choice.
        With *bare_now*, a start now comes as ``(now, None)``.

        A rank can host the request from *t* if the cores and GPUs the
        items there hold during the window (running jobs and the
        reservations the question respects) leave room.  That changes for
        the better only when an item on that rank ends, so each rank is
        read at the first candidate time (*floor*, or the first time after
        it at which something ends) its running jobs alone allow, and
        again after each of its own ends, lowest time first: the first
        time some rank can host the request is the earliest start, and
        R is the allocator's choice there: for one slot of cores on
        :class:`~flux_sched_base.pool.Rv1SummaryPool`, its rule applied to
        the ranks read at that time (:meth:`_one_slot_on`), else asked of
        it once on the scratch copy.  Per-rank room never
        refuses what the allocator accepts, so a refusal there (a
        constraint, a property) hands the question to the general search.
        """
        shape = self._one_rank_shape(request)
        if shape is None:
            return None
        duration = request.duration
        reservations = self.reservations
        if (
            ranks is None
            and within is None
            and not self.held_ids
            and len(reservations) >= len(self.up)
        ):
            if jobid not in reservations:
                # Every item counts and the plan is settled, so free of
                # conflicts: the ranks' kept stretches say when the first
                # of them could host the job, and the search starts there
                # (a time some item ends) instead of walking every end
                # before it (the back of a long queue).  With fewer
                # reservations than ranks the walk meets a rank none
                # blocks within a few steps, cheaper than reading every
                # rank's stretches (fifo's and easy's few reservations).
                lowest = self._first_start_anywhere(shape, duration, floor)
                if floor < lowest < INF:
                    floor, include_floor = lowest, True
        tied: list = []
        t = self._one_rank_start(
            shape,
            duration,
            floor,
            include_floor,
            limit,
            jobid,
            exclude_held,
            within,
            ranks,
            tied,
        )
        if t is None:
            return None
        if t == INF:
            if ranks is None:
                # (With *ranks*, the job's last answer placed it.)
                try:
                    self.pool.check_feasibility(request)
                except InfeasibleRequest:
                    return None  # the general search raises, or finds none
            return NO_START
        if bare_now and t <= self.now:
            return t, None
        considered = self._considered(jobid, exclude_held)
        if late and t > self.now:
            R = self._late_one_slot(request, t, considered)
            if R is not None:
                return t, R, LATE
            # Else the late ranks are chosen on the scratch copy at t.
        else:
            # Only the ranks tied at t can have room there: the allocator's
            # choice is the roomiest of them, read from the plan.
            R = self._one_slot_on(request, t, tied, considered)
            if R is not None:
                return t, R
        scratch = self._scratch()
        scratch.goto(t, self.window_end(t, duration), considered)
        self.probes += 1
        try:
            R = scratch.alloc(jobid, request)
        except InsufficientResources:
            return None
        scratch.unalloc(jobid)
        return t, R

    def _late_one_slot(self, request, t: float, considered):
        """The R :meth:`~flux_sched_base.planner.Planner._late_ranks` gives
        one slot of cores and no GPUs at *t* (after now) when a rank freed
        exactly at *t* can host it: the pool's own choice among those ranks
        (:meth:`_one_slot_on`).  None when this cannot say: the scratch
        copy answers."""
        return self._one_slot_on(
            request, t, self.ranks_freed_at(t, considered), considered
        )

    def _one_slot_now(self, jobid, request, exclude_held: bool, considered):
        """The R the pool gives one slot of cores and no GPUs now, for the
        whole window, around the reservations a question about *jobid*
        with *exclude_held* respects (*considered*): the ranks with room
        now, found rank by rank, and the pool's choice among them
        (:meth:`_one_slot_on`).  None where this cannot say, or no rank
        has room: the scratch copy answers."""
        shape = self._one_rank_shape(request)
        if shape is None:
            return None
        tied: list = []
        t = self._one_rank_start_now(shape, request, jobid, exclude_held, tied)
        if t is None or t == INF:
            return None
        return self._one_slot_on(request, self.now, tied, considered)

    def _one_rank_start_now(self, shape, request, jobid, exclude_held, tied=None):
        """:meth:`_one_rank_start` for a start now: now, ``inf`` (no rank
        has room now for the whole window) or None (cannot say)."""
        now = self.now
        return self._one_rank_start(
            shape,
            request.duration,
            now,
            True,
            math.nextafter(now, INF),
            jobid,
            exclude_held,
            None,
            None,
            tied,
        )

    def _one_slot_on(self, request, t: float, ranks, considered):
        """Where the pool puts one slot of cores and no GPUs at *t*, when
        no rank outside *ranks* has room for it there, read from the plan's
        items without moving the scratch copy: the pool's own choice (most
        free cores in the window, then GPUs, the first in table order)
        among the up ones of *ranks*.  None when this cannot say (another
        request or pool, a rank whose running jobs cannot be counted or
        whose pool entry holds cores or GPUs none of them names, none of
        *ranks* with room): the scratch copy answers."""
        impl = getattr(self.pool, "impl", None)
        if not isinstance(impl, Rv1SummaryPool) or not impl.places_by_one_slot_rank(
            request
        ):
            return None
        candidates = self.up.intersection(ranks)
        if not candidates:
            return None
        tend = self.window_end(t, request.duration)
        table = impl._ranks
        reservations, reserved_on = self.reservations, self.reserved_on
        running_steps, bisect_right = self.running_steps, bisect.bisect_right
        size = request.slot_size
        # No rank has more room than the largest one all free: the first
        # in table order with that much wins (ties go to the first).
        top = (self._max_node_cores, self._max_node_gpus)
        best, best_room, best_used = None, (-1, -1), None
        for rank in sorted(candidates, key=self.table_position(table).__getitem__):
            steps = running_steps(rank)
            if steps is None:
                return None
            busy_c, busy_g = steps[5], steps[6]
            info = table[rank]
            # The copy would also show what the pool holds for no running job.
            if not (
                info["allocated_cores"] <= busy_c[0]
                and info["allocated_gpus"] <= busy_g[0]
            ):
                return None
            k = bisect_right(steps[2], t)
            used_c, used_g = busy_c[k], busy_g[k]
            for other in reserved_on.get(rank, ()):
                item = reservations[other]
                if item.start < tend and item.end > t and considered(item):
                    cores, gpus = item.ranks[rank]
                    used_c = used_c | cores
                    used_g = used_g | gpus
            # one_slot_rank's rule, stopped early.
            room = room_left(info["cores"], info["gpus"], used_c, used_g)
            if room[0] >= size and room > best_room:
                best, best_room, best_used = rank, room, (used_c, used_g)
                if room >= top:
                    break
        if best is None:
            return None
        info = table[best]
        window = {
            "cores": info["cores"],
            "gpus": info["gpus"],
            "allocated_cores": best_used[0],
            "allocated_gpus": best_used[1],
        }
        return impl.grant([(best, *lowest_free(window, size, 0))], 1)

    def table_position(self, table) -> dict:
        """Each rank's position in the pool's rank table (the allocator's
        order among ties), kept while the table's ranks stay the same."""
        kept = self._positions
        if kept is None or kept[0] != len(table) or kept[1] is not table:
            kept = self._positions = (
                len(table),
                table,
                {rank: i for i, rank in enumerate(table)},
            )
        return kept[2]

    def _kept_first_start(self, rank, shape, duration, floor) -> float:
        """:func:`~flux_sched_base.availability.first_start` of *rank*'s
        free stretches over every item, kept with them."""
        on_rank = self._stretches.get(rank)
        first_key = (shape.cores, shape.gpus, duration, floor)
        first = None if on_rank is None else on_rank.get(first_key)
        if first is None:
            found = None if on_rank is None else on_rank.get((shape.cores, shape.gpus))
            if found is None:
                found = self._stretches_on(rank, shape, _every_item, True)
            first = availability.first_start(found, duration, floor)
            # Kept with the stretches, and forgotten with them.
            self._stretches[rank][first_key] = first
        return first

    def _first_start_anywhere(self, shape, duration, floor) -> float:
        """The earliest :meth:`_kept_first_start` of the up ranks: in a
        plan free of conflicts, no rank can host *shape* for *duration*
        before it, every item respected (counts of cores never refuse
        what the allocator accepts there)."""
        kept_first = self._kept_first_start
        return min(
            (kept_first(rank, shape, duration, floor) for rank in self.up),
            default=INF,
        )

    def first_room(self, request, ranks, floor: float) -> float | None:
        """The earliest time from *floor* at which one of *ranks* (the up
        ones) could host a one-rank *request* for its whole window, every
        item respected; None if the request is not searched rank by rank.

        A bound for :meth:`ranks_with_room` that holds for a whole pass:
        items placed since only push the answer later, so a request whose
        own reservation is on none of *ranks* and starts no later than
        this has no room on them before it."""
        shape = self._one_rank_shape(request)
        if shape is None:
            return None
        kept_first = self._kept_first_start
        duration = request.duration
        stretches = self._stretches
        first_key = (shape.cores, shape.gpus, duration, floor)
        least = INF
        for rank in self.up.intersection(ranks):
            # _kept_first_start's own lookup, without the call for most ranks
            on_rank = stretches.get(rank)
            first = None if on_rank is None else on_rank.get(first_key)
            if first is None:
                first = kept_first(rank, shape, duration, floor)
            if first < least:
                least = first
        return least

    def ranks_with_room(
        self, jobid: int, request, ranks, floor: float, limit: float
    ) -> set[int] | None:
        """Of *ranks*, the up ones that could host a one-rank *request*
        for its whole window from some time in ``[floor, limit)``, its own
        reservation left out; None if the request is not searched rank by
        rank (see :meth:`one_rank`).

        Read from each rank's free stretches (kept until an item on the
        rank changes, as the general search's :meth:`starts` reads them),
        and the earliest start they hold for the window, kept with them
        (many holders ask the same of a rank in a pass), so it costs a few
        dictionary reads per rank.  The stretches count what the
        items hold: in a plan where two reservations hold the same core at
        once (one placed ahead of a held one in a pass) a rank may be left
        out that the allocator would accept, as the general search leaves
        it out.  A running job past its end counts as ended, which only
        keeps more ranks.
        """
        shape = self._one_rank_shape(request)
        if shape is None:
            return None
        considered = self._considered(jobid, False)
        own = self.reservations.get(jobid)
        partial = own.ranks if own is not None else ()
        duration = request.duration
        kept_first = self._kept_first_start
        out = set()
        for rank in self.up.intersection(ranks):
            if (
                rank in partial
                and limit <= own.start
                and not self._own_rank_may_fit(rank, shape, duration, floor, limit)
            ):
                if self.check_kept:
                    exact = availability.first_start(
                        self._stretches_on(rank, shape, considered, False),
                        duration,
                        floor,
                    )
                    assert not exact < limit, f"rank {rank} has room the test denies"
                continue
            if rank in partial or self.check_kept:
                first = availability.first_start(
                    self._stretches_on(rank, shape, considered, rank not in partial),
                    duration,
                    floor,
                )
            else:
                first = kept_first(rank, shape, duration, floor)
            if first < limit:
                out.add(rank)
            elif self.check_one_rank:
                self._check_no_room(jobid, request, rank, floor, limit)
        return out

    def _own_rank_may_fit(self, rank, shape, duration, floor, start) -> bool:
        """Might a one-rank request whose own reservation on *rank* starts
        at *start* fit there from some time in ``[floor, start)``, its
        reservation left out?  Read from the rank's kept stretches (every
        item counted, its reservation too), so much cheaper than the rank's
        stretches without it.

        Before *start* the reservation holds nothing, and from *start* it
        holds what the job would: a window from ``t < start`` fits without
        it only if the stretches hold it whole before *start*, or hold
        ``[t, start)``.  False means it certainly does not fit."""
        for a, b in self._stretches_on(rank, shape, _every_item, True):
            u = max(a, floor)
            if u >= start:
                return False
            if b >= start or b - u >= duration:
                return True
        return False

    def _check_no_room(self, jobid, request, rank, floor, limit) -> None:
        """Fail if the one-rank search finds a start on *rank* that
        :meth:`ranks_with_room` left out, unless items on the rank hold the
        same core or GPU at once (tests: ``check_one_rank``)."""
        probes = self.probes
        found = self._earliest_one_rank(
            jobid, request, floor, True, limit, False, None, {rank}
        )
        self.probes = probes
        if found:
            assert self._rank_in_conflict(rank, jobid), (
                f"rank {rank} can host job {jobid} at {found[0]} "
                "but was left out as having no room"
            )

    def _rank_in_conflict(self, rank: int, own: int) -> bool:
        """Do two items on *rank* (the reservation of *own* left out) hold
        the same core or GPU at the same time?"""
        items = [
            self.item(jobid) for jobid in self.by_rank.get(rank, ()) if jobid != own
        ]
        for i, a in enumerate(items):
            a_start = -INF if a.start is None else a.start
            for b in items[i + 1 :]:
                b_start = -INF if b.start is None else b.start
                if a_start < b.end and b_start < a.end:
                    (ac, ag), (bc, bg) = a.ranks[rank], b.ranks[rank]
                    if ac & bc or ag & bg:
                        return True
        return False

    def one_rank(self, request) -> bool:
        """Is *request* searched for rank by rank (see :meth:`earliest`):
        one slot or one node, no constraint, no instance expiration?"""
        return self._one_rank_shape(request) is not None

    def _one_rank_shape(self, request) -> availability.Shape | None:
        """The per-rank :class:`~flux_sched_base.availability.Shape` of a
        request the allocator places on a single rank (one slot, or one
        node) with no constraint, when windows have no horizon; else None."""
        if self.pool.expiration > 0.0:
            return None
        try:
            key = (
                request.nnodes,
                request.nslots,
                request.slot_size,
                request.gpu_per_slot,
                request.exclusive,
                request.constraint is None,
            )
        except AttributeError:
            return None
        shapes = self._one_rank_shapes
        if key in shapes:
            return shapes[key]
        nnodes, nslots, _, _, _, unconstrained = key
        shape = None
        if unconstrained and (nnodes == 1 or (nnodes == 0 and nslots == 1)):
            shape = availability.shape_of(
                request, self.node_cores, self._node_gpus, self._most_slots
            )
            if shape is not None and shape.nodes != 1:
                shape = None
        shapes[key] = shape
        return shape

    def _one_rank_start(
        self,
        shape,
        duration,
        floor,
        include_floor,
        limit,
        own,
        exclude_held,
        within,
        ranks,
        tied: list | None = None,
    ) -> float | None:
        """The first candidate start (see
        :meth:`~flux_sched_base.profile.Profile.candidates`) below *limit*
        and inside *within* at which some up rank (of *ranks*, if given)
        has room for *shape* during the whole window (see
        :meth:`_earliest_one_rank`); ``inf`` if there is none, None if a
        running job is overdue or a rank's running jobs cannot be counted
        (see :meth:`~flux_sched_base.planbook.PlanBook.running_steps`).
        On a start found, *tied* (if given) is extended with the ranks
        next read at that time: no other rank has room there."""
        running_ends = self._running_ends
        if running_ends and running_ends[0][0] <= self.now:
            # An overdue job holds what the plan has free just after now.
            return None
        profile = self.profile
        window = self.window(duration)
        highs = None if within is None else [v for _, v in within]

        def admit(t):
            """*t* (a candidate), or the first candidate in *within* after
            it; None past *limit*."""
            while t is not None and t < limit:
                if highs is None:
                    return t
                j = bisect.bisect_left(highs, t)
                if j == len(highs):
                    return None
                low = within[j][0]
                if low <= t:
                    return t
                t = profile.next_end(low, strict=False)
            return None

        first = admit(floor if include_floor else profile.next_end(floor, strict=True))
        if first is None:
            return INF
        node_cores, node_gpus = self.node_cores, self._node_gpus
        need_g = shape.gpus or 0
        up = self.up
        if ranks is None:
            bounds, unknown = self.rank_bounds(shape.cores, need_g)
            if unknown:
                return None
        else:
            bounds = []
            for rank in up.intersection(ranks):
                bound = self.rank_bound(rank, shape.cores, need_g)
                if bound is None:
                    return None
                if bound != INF:
                    bounds.append((bound, rank))
            bounds.sort()

        def ranks_by_bound():
            """``(first time to read, rank)`` in the bounds' order."""
            for bound, rank in bounds:
                key = first if bound <= first else admit(bound)
                if key is None:
                    return  # past the limit, as every later bound
                yield key, rank

        fresh = ranks_by_bound()
        coming = next(fresh, None)
        heap: list = []  # ranks read once, keyed by their next own end
        running_steps = self.running_steps
        reservations, reserved_on = self.reservations, self.reserved_on
        # The reservations the question leaves out: its own, the held ones.
        held = self.held_ids if exclude_held else ()
        while True:
            if heap and (coming is None or heap[0] < coming):
                t, rank = heapq.heappop(heap)
            elif coming is not None:
                t, rank = coming
                coming = next(fresh, None)
            else:
                break
            free_c, free_g, ends, freed_c, freed_g, busy_c, busy_g = running_steps(rank)
            total_c = node_cores.get(rank, 0)
            need_c = total_c if shape.cores is None else shape.cores
            # Running jobs ending by t are gone (none is overdue): the
            # others hold busy_c[k], busy_g[k].
            k = bisect.bisect_right(ends, t)
            nxt = ends[k] if k < len(ends) else INF
            tend = window(t)
            over = []
            for jobid in reserved_on.get(rank, ()):
                if jobid == own or jobid in held:
                    continue
                item = reservations[jobid]
                end = item.end
                if item.start < tend and end > t:
                    over.append(item.ranks[rank])
                if t < end < nxt:
                    nxt = end
            room = not over  # its running jobs leave room from the first key on
            if not room:
                used_c = busy_c[k].union(*(cores for cores, _ in over))
                if total_c - len(used_c) >= need_c:
                    used_g = busy_g[k].union(*(gpus for _, gpus in over))
                    room = node_gpus.get(rank, 0) - len(used_g) >= need_g
            if room:
                if tied is not None:
                    tied.extend(_tied_at(t, rank, heap, coming, fresh))
                return t
            # Room on this rank can only come when one of its items ends.
            if nxt != INF:
                key = admit(nxt)
                if key is not None:
                    heapq.heappush(heap, (key, rank))
        return INF
