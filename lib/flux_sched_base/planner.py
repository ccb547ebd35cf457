"""An availability plan over time on top of the scheduler's resource pool.

The :class:`Planner` holds two kinds of items, each an allocation (an R)
over a time interval:

- **running jobs**, from now until their end: the expiration stamped on
  their R (start + duration, bounded by the instance expiration); a job
  with no expiration never ends in the plan;
- **reservations** for queued jobs: an R the job will get at a future
  start time, held until the job starts or the policy drops it.

It answers the questions a backfilling policy asks:

- :meth:`Planner.start_now`: can this job start now without touching the
  reservations it must respect?  If so it is started (allocated in the real
  pool) and becomes a running item.
- :meth:`Planner.earliest`: the earliest time (and the R it would get) at
  which a job fits, given the running jobs and a set of reservations.
- :meth:`Planner.is_valid` and :meth:`Planner.start_reserved`: is a held
  reservation still free of conflicts; can the job start on its reserved R
  now.

Fit is always decided by the pool's own allocator (``alloc`` on a
:class:`~flux_sched_base.scratch.Scratch` copy), so properties,
constraints, GPUs, exclusive nodes and RFC 14 ranges behave exactly as in a
real allocation.  A :class:`~flux_sched_base.profile.Profile` of aggregate
usage prunes candidate times first, so the allocator runs only where the
counts leave room; a request the allocator puts on one rank is searched
rank by rank (what each rank's items hold during the window), and the
allocator is asked once, where a rank has room.

A queue of whole-node jobs, or of one-core-slot jobs, needs none of
this: which nodes or cores a job gets does not matter, and a pass plans
with :meth:`Planner.node_profile` (whole free nodes over time) or
:meth:`Planner.core_profile` (free cores over time; see
:mod:`flux_sched_base.counts`), keeping its reservations as
:attr:`~flux_sched_base.planbook.PlanBook.promises` (a start time and a
count, no R).

Which reservations a question respects is a *view*: all of them except the
asking job's own, or, with ``exclude_held``, only those already settled in
the current pass, i.e. those of higher-priority jobs when the pass walks the
queue in priority order (see :meth:`Planner.begin_pass`).
"""

from __future__ import annotations

import contextlib
import math
import syslog

from flux.job import JobID
from flux.resource import InsufficientResources

from flux_sched_base import availability, counts, rstamp
from flux_sched_base.planbook import Item, parse_ranks, request_need
from flux_sched_base.pool import log_keeps
from flux_sched_base.rank_search import RankSearch
from flux_sched_base.scratch import Scratch

INF = math.inf

__all__ = ["Item", "Planner", "parse_ranks", "request_need"]


@contextlib.contextmanager
def _quiet(log):
    """Hide the pool's info-level "hello:" line while registering an R.

    The pool logs ``register_alloc`` as a restart-time "hello"; here it only
    commits an R chosen on a scratch copy, which is logged at debug level
    like an ordinary allocation instead.
    """
    level = getattr(log, "level", None)
    if not isinstance(level, int) or level < syslog.LOG_INFO:
        yield
        return
    log.level = syslog.LOG_NOTICE
    try:
        yield
    finally:
        log.level = level


class Planner(RankSearch):
    """Answers a policy's questions about the plan (see the module doc).

    Args:
        pool: the scheduler's :class:`~flux.resource.ResourcePool`.  The
            planner allocates in it when it starts jobs; every allocation of
            the scheduler should go through the planner so the two agree.
        log: the scheduler's logger (``Scheduler.log``), or None.
    """

    #: Compare every rank's kept free stretches with ones read afresh from
    #: its items, failing on a difference (tests).
    check_kept = False

    def _scratch(self) -> Scratch:
        if self.scratch is None:
            self.scratch = Scratch(self, self.now)
        return self.scratch

    # -- whole nodes as counts ----------------------------------------------------

    def _counts_hold(self, unit: str) -> bool:
        """Does the pool put a request counted in *unit* (``"nodes"`` or
        ``"cores"``) on any free units, as counting assumes?  A pool with
        placement rules of its own says which units stay interchangeable in
        ``interchangeable_units``; flux-python's Rv1Pool has no such
        attribute: both do."""
        units = getattr(self.pool, "interchangeable_units", None)
        return units is None or unit in units

    def whole_nodes(self, request) -> int | None:
        """Whole nodes *request* takes on this machine, or None (see
        :func:`flux_sched_base.counts.whole_nodes`; None too if the pool's
        placement makes whole nodes not interchangeable)."""
        if not self._counts_hold("nodes"):
            return None
        machine = self._machine
        if machine is None:
            machine = self._machine = counts.machine_of(
                self.node_cores, self._node_gpus
            )
        return counts.whole_nodes(request, self.node_cores, self._node_gpus, machine)

    def core_count(self, request) -> int | None:
        """Cores *request* takes if any free cores host it, or None (see
        :func:`flux_sched_base.counts.core_count`; None too if the pool's
        placement makes cores not interchangeable)."""
        if not self._counts_hold("cores"):
            return None
        return counts.core_count(request)

    def node_profile(self) -> counts.NodeProfile:
        """Whole free up nodes over time, from the running jobs alone."""
        return self.releases.node_profile(self.now)

    def core_profile(self) -> counts.NodeProfile:
        """Free cores of up nodes over time, from the running jobs alone."""
        return self.releases.core_profile(self.now)

    # -- questions -----------------------------------------------------------------

    def earliest(
        self,
        jobid: int,
        request,
        *,
        floor: float,
        include_floor: bool = True,
        limit: float = INF,
        exclude_held: bool = False,
        within: availability.Intervals | None = None,
        prefer_late: bool = False,
        ranks: set[int] | None = None,
        bare_now: bool = False,
    ):
        """Earliest start at or after *floor* (before *limit*) and its R.

        The job's own reservation, if it holds one, is ignored.  *within*
        restricts the search to those start times (see :meth:`starts`).
        *ranks* narrows it to the times at which one of those ranks can
        host the job's share of a node: for a caller that knows the other
        ranks got no lighter since the job's last answer, so offer nothing
        earlier than it (a request on one rank then starts on one of them).
        With *prefer_late*, a start after now gets an R on the ranks that
        become free last, where the allocator can do without the others
        (see :meth:`_late_ranks`): right for a reservation that others
        backfill around; without it, R is the allocator's own choice, as
        it will be when the job starts on a pool in that state.  With
        *bare_now*, a start now found rank by rank comes as ``(now,
        None)``: for a caller that then starts the job itself
        (:meth:`start_now`), so the allocator is not asked for an R that
        would go unused.
        Returns ``(t, R)``, or None if no candidate time works: then the job
        cannot be placed given what never ends in the plan.  Raises
        :class:`~flux.resource.InfeasibleRequest` if the allocator finds the
        request structurally impossible.
        """
        question = (jobid, request, floor, include_floor, limit, exclude_held, within)
        found = self._earliest_one_rank(*question, ranks, prefer_late, bare_now)
        if found is None:
            found = self._earliest_by_candidates(*question, ranks)
        elif self.check_one_rank:
            self._compare_one_rank(found, *question, ranks)
        if not found:
            return None
        t, R = found[:2]
        if prefer_late and t > self.now and len(found) == 2:
            considered = self._considered(jobid, exclude_held)
            R = self._late_ranks(jobid, request, t, considered, R)
        return t, R

    def _earliest_by_candidates(
        self, jobid, request, floor, include_floor, limit, exclude_held, within, ranks
    ):
        """:meth:`earliest` (without *prefer_late*) for any request: the
        count profile's candidate times, each asked of the allocator."""
        if ranks is not None:
            allowed = self.starts(
                jobid,
                request,
                floor=floor,
                limit=limit,
                exclude_held=exclude_held,
                ranks=ranks,
                needed=1,
            )
            if allowed is not None:
                if within is not None:
                    allowed = availability.intersect(within, allowed)
                if not allowed:
                    return None
                within = allowed
        duration = request.duration
        need = self.need(request)
        own_item = self.reservations.get(jobid)
        own_spec = (own_item.start, own_item.end, own_item.vec) if own_item else None
        considered = self._considered(jobid, exclude_held)
        minus = self.held_profile() if exclude_held else None
        ranked = None  # start times enough ranks allow; computed on a miss

        def search(floor: float, include_floor: bool, within):
            return self.profile.candidates(
                floor,
                duration,
                need,
                include_floor=include_floor,
                limit=limit,
                minus=minus,
                own=own_spec,
                horizon=self.horizon(),
                within=within,
            )

        times = search(floor, include_floor, within)
        while (t := next(times, None)) is not None:
            tend = self.window_end(t, duration)
            if ranked is not None and not self._enough_hosts(
                ranked, t, tend, considered
            ):
                continue
            scratch = self._scratch()
            scratch.goto(t, tend, considered)
            self.probes += 1
            try:
                R = scratch.alloc(jobid, request)
            except InsufficientResources:
                if ranked is None:
                    # The counts were too optimistic (a long window meets
                    # many reservations): narrow down rank by rank, and
                    # read only the times enough ranks allow from now on.
                    ranked = self._ranked_starts(
                        jobid, request, floor=t, limit=limit, exclude_held=exclude_held
                    )
                    if ranked is not None:
                        allowed = ranked[2]
                        if within is not None:
                            allowed = availability.intersect(within, allowed)
                        if not allowed:
                            return None
                        times = search(t, False, allowed)
                continue
            scratch.unalloc(jobid)
            return t, R
        return None

    def _enough_hosts(self, ranked, t: float, tend: float, considered) -> bool:
        """Can enough ranks host their share of a request in ``[t, tend)``?

        *ranked* is what :meth:`_ranked_starts` found.  A rank counts if
        *t* is among its valid starts and the cores and GPUs that no item
        overlapping the window holds (the scratch copy's free ones there)
        leave room for the share: per-instant counts may fit where the
        items' own cores, taken together over the window, do not.  False
        means the allocator would refuse *t*, so no probe is needed.
        """
        shape, by_rank, union, needed = ranked
        if not availability.contains(union, t):
            return False
        running, reservations = self.running, self.reservations
        at_now = t <= self.now
        hosts = 0
        for rank, starts in by_rank.items():
            if not availability.contains(starts, t):
                continue
            used_c: set = set()
            used_g: set = set()
            for jobid in self.by_rank.get(rank, ()):
                item = running.get(jobid)
                if item is None:
                    item = reservations[jobid]
                    if item.start >= tend or item.end <= t or not considered(item):
                        continue
                elif not at_now and item.end <= t:
                    continue
                cores, gpus = item.ranks[rank]
                used_c |= cores
                used_g |= gpus
            total_c = self.node_cores.get(rank, 0)
            need_c = total_c if shape.cores is None else shape.cores
            if (
                total_c - len(used_c) >= need_c
                and self._node_gpus.get(rank, 0) - len(used_g) >= shape.gpus
            ):
                hosts += 1
                if hosts >= needed:
                    return True
        return False

    def _late_ranks(self, jobid: int, request, t: float, considered, R):
        """Choose an R for a reservation at *t* that leaves early-free ranks.

        Among the ranks free before *t*, the allocator is kept off those
        that became free earliest, as many as it can do without: a later
        job that could start sooner (before *t*, or now, running past
        *t*) then finds them free.  The current scratch shows the window
        at *t*; *R* is the allocator's own choice there.
        """
        now = self.now
        scratch = self.scratch
        pool = scratch.pool

        def without(hidden):
            """The allocator's choice with the ranks *hidden* left out."""
            scratch.set_up(hidden, False)
            self.probes += 1
            try:
                found = pool.alloc(jobid, request)
            except InsufficientResources:
                return None
            else:
                pool.free(jobid)
            finally:
                scratch.set_up(hidden, True)
            return found

        # Often the ranks freed at t (something on them ends then) are
        # enough: one probe with every other rank hidden, and when those
        # got lighter need not be worked out.
        earlier = self.up - self.ranks_freed_at(t, considered)
        if not earlier:
            return R
        found = without(earlier)
        if found is not None:
            return found
        # When each of those ranks last got lighter before t: the latest
        # end, in (now, t), of a running job or respected reservation on it.
        since = dict.fromkeys(earlier, now)
        ending = [
            self.running[jobid]
            for _, jobid in self._running_ends.irange(
                (now, INF), (t, -INF), inclusive=(False, False)
            )
        ]
        ending += [
            item
            for item in self.reservations_overlapping(now, t)
            if item.end < t and considered(item)
        ]
        for item in ending:
            for rank in item.ranks:
                if since.get(rank, INF) < item.end:
                    since[rank] = item.end
        order = sorted(since, key=lambda rank: (since[rank], rank))
        # As many early-free ones as R has ranks, or else the most that can
        # be hidden, by bisection (hiding more never helps the allocator).
        k = max(0, len(order) - len(parse_ranks(R)))
        found = without(order[:k]) if k > 0 else None
        if found is not None:
            return found
        best, lo, hi = R, 0, k - 1
        while lo < hi:
            k = (lo + hi + 1) // 2
            found = without(order[:k])
            if found is None:
                hi = k - 1
            else:
                best, lo = found, k
        return best

    def _items_on(self, rank: int, considered):
        running, reservations = self.running, self.reservations
        for jobid in self.by_rank.get(rank, ()):
            item = running.get(jobid)
            if item is not None:
                cores, gpus = item.ranks[rank]
                yield -INF, item.end, len(cores), len(gpus)
                continue
            item = reservations[jobid]
            if considered(item):
                cores, gpus = item.ranks[rank]
                yield item.start, item.end, len(cores), len(gpus)

    def _stretches_on(self, rank: int, shape, considered, whole_view: bool):
        """:func:`~flux_sched_base.availability.free_stretches` of *rank*
        for *shape*, from the items *considered* respects.  With
        *whole_view* (the question respects every item on the rank) they
        are kept until an item on the rank changes (see
        :meth:`~flux_sched_base.planbook.PlanBook._rank_changed`)."""
        if whole_view:
            kept = self._stretches.get(rank)
            if kept is None:
                kept = self._stretches[rank] = {}
            key = (shape.cores, shape.gpus)
            found = kept.get(key)
            if found is not None:
                if self.check_kept:
                    fresh = self._stretches_on(rank, shape, considered, False)
                    assert fresh == found, f"kept stretches of rank {rank} differ"
                return found
        # Every shape asked of a rank reads the same usage changes: with
        # the whole view they are kept with its stretches.
        events = kept.get(None) if whole_view else None
        if events is None:
            events = []
            for start, end, cores, gpus in self._items_on(rank, considered):
                events.append((start, cores, gpus))
                if end != INF:
                    events.append((end, -cores, -gpus))
            events.sort()
            if whole_view:
                kept[None] = events
        found = availability.free_stretches(
            events, self.node_cores.get(rank, 0), self._node_gpus.get(rank, 0), shape
        )
        if whole_view:
            kept[key] = found
        return found

    def _partial_view_ranks(self, jobid: int, exclude_held: bool) -> set[int]:
        """Ranks holding a reservation a question about *jobid* leaves out
        (its own; with *exclude_held*, those still held in the pass)."""
        out: set[int] = set()
        own = self.reservations.get(jobid)
        if own is not None:
            out.update(own.ranks)
        if exclude_held:
            reservations = self.reservations
            for other in self.held_ids:
                out.update(reservations[other].ranks)
        return out

    def starts(
        self,
        jobid: int,
        request,
        *,
        floor: float,
        limit: float = INF,
        exclude_held: bool = False,
        ranks=None,
        needed: int | None = None,
    ) -> availability.Intervals | None:
        """Start times at which enough ranks could host *request*.

        Ranks are judged one by one against the plan (the job's own
        reservation left out): a rank counts at *t* if it can host one
        node's share of the request during the whole window from *t*.
        Properties and constraints are ignored, so the allocator may still
        refuse a time returned here, but never accepts one that is not.
        *ranks* (default: all up ranks) and *needed* (default: the request's
        node count) narrow the question.  None means "cannot say" (an
        unusual request, or an instance expiration that shortens windows).
        """
        found = self._ranked_starts(
            jobid,
            request,
            floor=floor,
            limit=limit,
            exclude_held=exclude_held,
            ranks=ranks,
            needed=needed,
        )
        return None if found is None else found[2]

    def _ranked_starts(
        self,
        jobid: int,
        request,
        *,
        floor: float,
        limit: float,
        exclude_held: bool,
        ranks=None,
        needed: int | None = None,
    ):
        """What :meth:`starts` finds, with the ranks it judged:
        ``(shape, {rank: its valid starts}, start times, ranks needed)``,
        or None where it cannot say."""
        if self.horizon() != INF:
            return None
        shape = availability.shape_of(
            request, self.node_cores, self._node_gpus, self._most_slots
        )
        if shape is None:
            return None
        considered = self._considered(jobid, exclude_held)
        partial = self._partial_view_ranks(jobid, exclude_held)
        candidates = self.up if ranks is None else self.up & set(ranks)
        by_rank = availability.starts_by_rank(
            candidates,
            lambda rank: self._stretches_on(
                rank, shape, considered, rank not in partial
            ),
            request.duration,
            floor,
            limit,
        )
        needed = shape.nodes if needed is None else needed
        return (
            shape,
            by_rank,
            availability.count_starts(by_rank.values(), needed),
            needed,
        )

    def fits_counts_now(self, request, need=None) -> bool:
        """Cheap test: do the counts leave room for *request* from now on?

        Respects every reservation in the plan; False means the request
        certainly cannot start now.  A request on one rank is asked of the
        ranks instead (see :meth:`_one_rank_room_now`): on a full machine
        most have no room now for its whole window, and the ranks kept in
        order of when their running jobs leave room say so at once.
        """
        need = need or self.need(request)
        free = self.profile.free_now_upper()
        if any(need[i] > free[i] for i in range(4)):
            return False
        room = self._one_rank_room_now(request, None, False)
        if room is not None and not self.check_one_rank:
            return room
        counts = self.profile.fits_from(
            self.now, request.duration, need, self.horizon()
        )
        return self._room_or_counts(room, counts)

    def _room_or_counts(self, room: bool | None, counts: bool) -> bool:
        """The ranks' answer (:meth:`_one_rank_room_now`) where they gave
        one, else the counts'; with ``check_one_rank`` (tests), fail if a
        rank had room where the counts of a plan within capacity refuse."""
        if room is None:
            return counts
        assert not room or counts or self.profile.over_capacity(), (
            "a rank has room now that the counts refuse"
        )
        return room

    def _one_rank_room_now(self, request, jobid, exclude_held) -> bool | None:
        """For a request that goes on one rank: does some up rank have
        room for it from now for its whole window (the reservations a
        question about *jobid* with *exclude_held* respects counted)?
        None for another request, or where the one-rank search cannot say.

        A rank with room answers the counts too: the items the question
        respects are then free of conflicts (settled in queue order, or a
        pass's backfill after the holders), so adding the job's share to
        that rank keeps every count within the machine's."""
        shape = self._one_rank_shape(request)
        if shape is None:
            return None
        t = self._one_rank_start_now(shape, request, jobid, exclude_held)
        return None if t is None else t != INF

    def start_now(
        self,
        jobid: int,
        request,
        *,
        exclude_held: bool = False,
        ignore_reservations: bool = False,
        counts_checked: bool = False,
    ):
        """Start *jobid* now if it fits without touching respected reservations.

        The job's own reservation, if any, is ignored and, on success,
        dropped.  On success the job is allocated in the real pool, its R
        stamped (``starttime``, ``expiration``), and it becomes a running
        item; the stamped R is returned.  Returns None if it does not fit.
        Raises :class:`~flux.resource.InfeasibleRequest` for a request that
        can never be satisfied.

        *counts_checked*: the caller has just found that the job fits now
        (:meth:`fits_counts_now`, or a search that found now), so the
        counts, which only spare the allocator a question they refuse, are
        not read again: the allocator decides either way.
        """
        need = self.need(request)
        free = self.profile.free_now_upper()
        if any(need[i] > free[i] for i in range(4)):
            return None
        now = self.now
        duration = request.duration
        tend = self.window_end(now, duration)
        if (
            not ignore_reservations
            and not counts_checked
            and not self._counts_allow_now(jobid, request, need, exclude_held, tend)
        ):
            return None
        considered = self._considered(jobid, exclude_held)
        blocked = not ignore_reservations and any(
            considered(r) for r in self.reservations_overlapping(now, tend)
        )
        if not blocked:
            try:
                R = self.pool.alloc(jobid, request)
            except InsufficientResources:
                return None
            expiration = rstamp.stamp(R, duration, self.pool.expiration)
            self.pool.update_expiration(jobid, expiration)
            # Drop the job's reservation first: in a scratch copy it is
            # registered under the same job id as the running allocation.
            self.drop(jobid)
            item = self.add_running(jobid, R, expiration)
            if self.scratch is not None:
                self.scratch.running_added(item, allocated_here=False)
            return R
        # One slot of cores: the allocator's choice read from the plan,
        # without moving the scratch copy to the window.
        R = self._one_slot_now(jobid, request, exclude_held, considered)
        allocated_here = R is None
        if R is None:
            self.probes += 1
            R = self._alloc_on_copy(jobid, request, tend, considered)
            if R is None:
                return None
        elif self.check_one_rank:
            theirs = self._alloc_on_copy(jobid, request, tend, considered)
            if theirs is not None:
                self.scratch.unalloc(jobid)
            assert theirs is not None and parse_ranks(theirs) == parse_ranks(R), (
                f"job {jobid}: R read from the plan {parse_ranks(R)}, "
                f"the allocator's {theirs and parse_ranks(theirs)}"
            )
        expiration = rstamp.stamp(R, duration, self.pool.expiration)
        self._commit(jobid, R)
        self.drop(jobid)
        item = self.add_running(jobid, R, expiration)
        if self.scratch is not None:
            self.scratch.running_added(item, allocated_here)
        return R

    def _alloc_on_copy(self, jobid, request, tend: float, considered):
        """The scratch copy's allocator's R for *request* now, until *tend*,
        around the reservations *considered* respects (held in the copy
        until freed or committed), or None."""
        scratch = self._scratch()
        scratch.goto(self.now, tend, considered)
        try:
            return scratch.alloc(jobid, request)
        except InsufficientResources:
            return None

    def transfer(self, jobid: int, other: int):
        """Hand the allocation *jobid* was just given to *other* (a job with
        an identical request): the pool and the plan then hold it for
        *other*.  Returns its R."""
        item = self.running[jobid]
        # A copy that counts holders follows the swap (the same cores,
        # held until the same end) instead of being made again.
        if self.scratch is not None and not self.scratch.released(
            item, set(item.ranks)
        ):
            self.invalidate()
        self._remove_running(item)
        self.pool.free(jobid)
        self._commit(other, item.R)
        expiration = item.end if item.end != INF else 0.0
        taken = self.add_running(other, item.R, expiration)
        if self.scratch is not None:
            self.scratch.running_added(taken, allocated_here=False)
        return item.R

    def _counts_allow_now(self, jobid, request, need, exclude_held, tend) -> bool:
        """Do the counts let *need* (which fits the usage now) stay from
        now until *tend*, around the reservations considered?  For a
        request on one rank, False also when no rank has room for the
        whole window (see :meth:`_earliest_one_rank`)."""
        now = self.now
        if next(self.reservations_overlapping(now, tend), None) is None:
            # Only running jobs use anything in the window, and their
            # usage only falls as they end: what fits now fits throughout.
            # (Scanning the window would cost a step per running job.)
            return True
        duration = request.duration
        room = self._one_rank_room_now(request, jobid, exclude_held)
        if room is not None and not self.check_one_rank:
            # Without room on a rank the allocator would refuse, whatever
            # the counts say; with it, the counts fit.
            return room
        own = self.reservations.get(jobid)
        own_spec = (own.start, own.end, own.vec) if own else None
        if not exclude_held:
            # Every other reservation respected: the same question, read at
            # the times usage rises.
            counts = self.profile.fits_from(
                self.now, duration, need, self.horizon(), own=own_spec
            )
        else:
            found = self.profile.candidates(
                self.now,
                duration,
                need,
                limit=math.nextafter(self.now, INF),
                minus=self.held_profile(),
                own=own_spec,
                horizon=self.horizon(),
            )
            counts = next(found, None) is not None
        return self._room_or_counts(room, counts)

    def _commit(self, jobid: int, R) -> None:
        """Allocate an R chosen on a scratch copy in the real pool."""
        with _quiet(self.log):
            self.pool.register_alloc(jobid, R)
        if log_keeps(self.log, syslog.LOG_DEBUG):
            self.log(syslog.LOG_DEBUG, f"alloc: {JobID(jobid).f58}: {R.dumps()}")

    def _free_now(self, item: Item) -> bool:
        """Are *item*'s resources up and held by no running job now?"""
        up = self.up
        running = self.running
        for rank, (cores, gpus) in item.ranks.items():
            if rank not in up:
                return False
            for other in self.by_rank.get(rank, ()):
                other_item = running.get(other)
                if other_item is None or other == item.jobid:
                    continue
                ocores, ogpus = other_item.ranks[rank]
                if cores & ocores or gpus & ogpus:
                    return False
        return True

    def still_valid(self, item: Item) -> bool:
        """Is reservation *item* still in the future and free of conflicts?

        Cheap when none of its ranks got heavier since it was last found
        valid; otherwise the full :meth:`is_valid` check.
        """
        if item.start <= self.now:
            return False
        if self.untouched_since(item):
            return True
        if self.is_valid(item):
            item.validated = self.heavy_epoch
            return True
        return False

    def is_valid(self, item: Item, *, exclude_held: bool = False) -> bool:
        """Is reservation *item* free of conflicts in the plan?

        Its ranks must be up and no running job (until its planned end) or
        respected reservation may use any of its cores or GPUs during its
        interval.
        """
        up = self.up
        running = self.running
        reservations = self.reservations
        considered = self._considered(item.jobid, exclude_held)
        start, end = item.start, item.end
        for rank, (cores, gpus) in item.ranks.items():
            if rank not in up:
                return False
            for other in self.by_rank.get(rank, ()):
                if other == item.jobid:
                    continue
                o = running.get(other)
                if o is not None:
                    if o.end <= start:
                        continue
                else:
                    o = reservations[other]
                    if not considered(o) or o.end <= start or o.start >= end:
                        continue
                ocores, ogpus = o.ranks[rank]
                if cores & ocores or gpus & ogpus:
                    return False
        return True

    def start_reserved(self, jobid: int, duration: float):
        """Start *jobid* on its reserved R if that is possible now.

        The reservation must have started (``start <= now``), its R must be
        free now and clash with no other reservation.  Returns the stamped
        R, or None.
        """
        item = self.reservations.get(jobid)
        if item is None or item.start > self.now:
            return None
        if not self._free_now(item) or not self.is_valid(item):
            return None
        R = item.R
        scratch = self.scratch
        self.scratch = None  # drop() must not free it from the scratch
        self.drop(jobid, lighten=False)
        self.scratch = scratch
        expiration = rstamp.stamp(R, duration, self.pool.expiration)
        self._commit(jobid, R)
        running = self.add_running(jobid, R, expiration)
        if scratch is not None:
            scratch.reservation_started(running)
        return R

    # -- statistics --------------------------------------------------------------
