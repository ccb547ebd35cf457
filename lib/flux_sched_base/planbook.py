"""The plan's state: running jobs and reservations, kept consistent.

:class:`PlanBook` holds two kinds of :class:`Item`, each an allocation (an
R) over a time interval:

- **running jobs**, from now until their end: the expiration stamped on
  their R (start + duration, bounded by the instance expiration); a job
  with no expiration never ends in the plan;
- **reservations** for queued jobs: an R the job will get at a future
  start time, held until the job starts or the policy drops it.

Every change keeps three views of the items in step: the per-rank index
(``by_rank``), the aggregate usage :class:`~flux_sched_base.profile.Profile`
and the end/start orderings, and logs which ranks got *lighter* (so a
reservation knows whether it could move earlier).  The questions a policy
asks are answered by :class:`~flux_sched_base.planner.Planner`, built on
this class.
"""

from __future__ import annotations

import bisect
import math

from flux.idset import IDset
from flux.job import JobID
from sortedcontainers import SortedList

from flux_sched_base import rstamp
from flux_sched_base.profile import Profile
from flux_sched_base.releases import Releases

INF = math.inf


class Item:
    """One allocation in the plan: a running job or a reservation.

    Attributes:
        jobid: the job.
        start: reservation start, or None for a running job.
        end: planned end (``math.inf``: never).
        R: the allocation (a resource pool object from the allocator).
        ranks: ``{rank: (cores, gpus)}`` of R, as frozensets of ids.
        vec: (cores, gpus, full nodes, nodes) of R, for the profile.
        checked: for reservations, the planner's lighten epoch when the job
            last looked for an earlier start.
        validated: for reservations, the planner's heavy epoch when the
            reservation was last found free of conflicts.
    """

    __slots__ = ("jobid", "start", "end", "R", "ranks", "vec", "checked", "validated")

    def __init__(self, jobid, start, end, R, ranks, vec):
        self.jobid = jobid
        self.start = start
        self.end = end
        self.R = R
        self.ranks = ranks
        self.vec = vec
        self.checked = -1
        self.validated = -1

    def __repr__(self) -> str:
        kind = "running" if self.start is None else f"start={self.start}"
        return f"Item({JobID(self.jobid).f58} {kind} end={self.end} {self.vec})"


def parse_ranks(R) -> dict[int, tuple[frozenset, frozenset]]:
    """``{rank: (cores, gpus)}`` of an R (pool object or RFC 20 dict)."""
    if not isinstance(R, dict):
        ranks = _pool_ranks(R)
        if ranks is not None:
            return ranks
    data = R if isinstance(R, dict) else R.to_dict()
    ranks: dict[int, tuple[frozenset, frozenset]] = {}
    for entry in data.get("execution", {}).get("R_lite", []):
        children = entry.get("children", {})
        cores = frozenset(IDset(children.get("core", "")))
        gpus = frozenset(IDset(children.get("gpu", "")))
        for rank in IDset(entry.get("rank", "")):
            ranks[rank] = (cores, gpus)
    return ranks


def _pool_ranks(R) -> dict[int, tuple[frozenset, frozenset]] | None:
    """``{rank: (cores, gpus)}`` read straight from a flux-python Rv1 pool
    object (``_ranks``: rank -> ``{"cores": set, "gpus": set, ...}``), or
    None for any other kind.  An allocation is read this way when it
    enters the plan, sparing an encoding of R and a parse of its idsets."""
    state = getattr(getattr(R, "impl", R), "_ranks", None)
    if not isinstance(state, dict):
        return None
    try:
        return {
            rank: (frozenset(info["cores"]), frozenset(info["gpus"]))
            for rank, info in state.items()
        }
    except (KeyError, TypeError):
        return None


def request_need(request, node_cores: int = 0) -> tuple[int, int, int, int]:
    """Lower bounds on what any allocation of *request* uses.

    Returns (cores, gpus, nodes that must not be full, nodes that must be
    idle).  A node must be idle for an exclusive request, or when the
    request needs *node_cores* (the largest node's core count) on each node.
    """
    nnodes = getattr(request, "nnodes", 0) or 0
    nslots = getattr(request, "nslots", 1) or 0
    slot_size = getattr(request, "slot_size", 1) or 0
    gpus = getattr(request, "gpu_per_slot", 0) or 0
    idle = 0
    if nnodes:
        per_node = (nslots // nnodes) * slot_size
        if getattr(request, "exclusive", False) or (
            node_cores and per_node >= node_cores
        ):
            idle = nnodes
    return (
        nslots * slot_size,
        nslots * gpus,
        max(nnodes, 1 if nslots else 0),
        idle,
    )


class PlanBook:
    """Running jobs and reservations over time, on top of *pool*.

    Args:
        pool: the scheduler's :class:`~flux.resource.ResourcePool`.
        log: the scheduler's logger (``Scheduler.log``), or None.
    """

    def __init__(self, pool, log=None):
        self.pool = pool
        self.log = log
        self.running: dict[int, Item] = {}
        self.reservations: dict[int, Item] = {}
        self.by_rank: dict[int, set[int]] = {}
        # Per rank, the sets of its cores and GPUs (see running_steps).
        self._rank_sets: dict[int, tuple[frozenset, frozenset]] = {}
        #: Per rank, the jobs holding a reservation there.
        self.reserved_on: dict[int, set[int]] = {}
        # Per rank, free stretches by request shape over all its items
        # (kept by Planner.starts, forgotten by _rank_changed).
        self._stretches: dict[int, dict] = {}
        # Per rank, what its running jobs free over time (see running_steps).
        self._steps: dict[int, tuple] = {}
        # Per share of a rank, when its running jobs leave room for it on
        # each up rank (see rank_bounds), and the ranks changed since.
        self._bounds: dict[tuple, tuple] = {}
        self._bounds_dirty: set[int] = set()
        # Sets handed out by watch_running, filled with the ranks changed.
        self._watchers: list[set[int]] = []
        # Per rank, a count of the changes to its items (see ranks_version).
        self._rank_versions: dict[int, int] = {}
        self._resources_version = 0
        self._running_ends = SortedList()  # (end, jobid)
        self._res_starts = SortedList()  # (start, jobid)
        self._res_ends = SortedList()  # (end, jobid)
        self.node_cores: dict[int, int] = {}
        self._node_gpus: dict[int, int] = {}
        self._max_node_cores = 0
        self._max_node_gpus = 0
        self.up: set[int] = set()
        self.profile = Profile()
        #: Cores and whole nodes the running jobs release over time.
        self.releases = Releases()
        # Usage of held reservations; built when a question first needs it.
        self._held: Profile | None = None
        self.held_ids: set[int] = set()
        #: Count-based reservations: ``jobid -> (start, end, units)``, a
        #: start time and a number of whole nodes or cores, no ranks (see
        #: :mod:`flux_sched_base.counts`).  Rebuilt by each pass that uses
        #: them.
        self.promises: dict[int, tuple[float, float, int]] = {}
        #: The pass's scratch copy (see :mod:`flux_sched_base.scratch`).
        self.scratch = None
        self.now = 0.0
        #: Incremented whenever the plan gets lighter (a job ends early, a
        #: reservation is dropped or moves earlier, resources come up, an
        #: expiration is shortened): only then can a reservation move earlier.
        self.lighten_epoch = 0
        # The ranks each lightening freed, from epoch _log_base on.
        self._lightened: list[frozenset] = []
        self._log_base = 0
        #: Incremented whenever the plan gets heavier on some ranks (a job
        #: starts, a reservation is placed, an expiration is extended, ranks
        #: go down); ``_heavy`` keeps, per rank, the recent ones as
        #: ``(epoch, start, end)``, so a reservation whose ranks and interval
        #: nothing touched needs no new conflict check.
        self.heavy_epoch = 0
        self._heavy: dict[int, list] = {}
        #: Allocator calls made for questions (statistics).
        self.probes = 0
        self.refresh_resources()

    # -- resources ------------------------------------------------------------------

    def refresh_resources(self) -> None:
        """Re-read topology and up/down state from the pool (after an update)."""
        old_up = self.up
        ranks = parse_ranks(self.pool.to_dict())
        down = set(self.pool.copy_down().ranks)
        self.up = set(ranks) - down
        came_up = self.up - old_up
        went_down = old_up - self.up
        # Capacity only grows: ranks that left may still hold running jobs.
        for rank, (cores, _) in ranks.items():
            self.node_cores[rank] = len(cores)
        self._rank_sets.update(ranks)
        self._node_gpus.update((rank, len(gpus)) for rank, (_, gpus) in ranks.items())
        capacity = (
            sum(self.node_cores.values()),
            sum(self._node_gpus.values()),
            len(self.node_cores),
            len(self.node_cores),
        )
        self._max_node_cores = max(self.node_cores.values(), default=0)
        self._max_node_gpus = max(self._node_gpus.values(), default=0)
        self._stretches.clear()  # capacities may have changed
        self._steps.clear()
        self._bounds.clear()
        self._bounds_dirty.clear()
        self._watchers.clear()
        self._resources_version += 1
        self._machine = None  # see Planner.whole_nodes
        self.profile.capacity = capacity
        self.releases.reset(self.up, self.node_cores, self.running.values())
        self._held = None
        self._most_slots: dict = {}
        self._one_rank_shapes: dict = {}
        self._positions = None  # see RankSearch.table_position
        if came_up:
            self._lighten(came_up)
        if went_down:
            self._heavier(went_down)
        self.invalidate()

    def _heavier(self, ranks, start: float = -INF, end: float = INF) -> None:
        """Record that *ranks* got heavier during ``[start, end)``."""
        self.heavy_epoch += 1
        mark = (self.heavy_epoch, start, end)
        for rank in ranks:
            marks = self._heavy.setdefault(rank, [])
            marks.append(mark)
            if len(marks) > 32:
                # Keep the newest; one mark over all time, as old as the
                # newest dropped one, stands for the others.
                dropped, kept = marks[:-16], marks[-16:]
                marks[:] = [(dropped[-1][0], -INF, INF), *kept]

    def untouched_since(self, item: Item) -> bool:
        """True if nothing got heavier on *item*'s ranks during its interval
        since it was last found valid."""
        heavy, since = self._heavy, item.validated
        start, end = item.start, item.end
        for rank in item.ranks:
            for epoch, a, b in reversed(heavy.get(rank, ())):
                if epoch <= since:
                    break
                if a < end and b > start:
                    return False
        return True

    def _lighten(self, ranks) -> None:
        """Record that *ranks* got lighter somewhere in the plan."""
        self._lightened.append(frozenset(ranks))
        self.lighten_epoch += 1
        if len(self._lightened) > 4096:
            del self._lightened[:2048]
            self._log_base += 2048

    def lightened_since(self, epoch: int) -> set[int] | None:
        """Ranks that got lighter since *epoch* (None: too long ago to say)."""
        if epoch < self._log_base:
            return None
        out: set[int] = set()
        for ranks in self._lightened[epoch - self._log_base :]:
            out |= ranks
        return out

    def lightened_at(self, epoch: int) -> frozenset | None:
        """The ranks the lightening from *epoch* to ``epoch + 1`` freed
        (None: too long ago to say)."""
        if epoch < self._log_base:
            return None
        return self._lightened[epoch - self._log_base]

    def invalidate(self) -> None:
        """Forget the scratch copy (call after any change not made here)."""
        self.scratch = None

    def item(self, jobid: int) -> Item:
        """The running item or reservation of *jobid*."""
        item = self.running.get(jobid)
        return item if item is not None else self.reservations[jobid]

    def need(self, request) -> tuple[int, int, int, int]:
        """What *request* needs at least, in profile counts."""
        return request_need(request, self._max_node_cores)

    def _vec(self, ranks) -> tuple[int, int, int, int]:
        ncores = ngpus = full = 0
        node_cores = self.node_cores
        for rank, (cores, gpus) in ranks.items():
            ncores += len(cores)
            ngpus += len(gpus)
            if len(cores) >= node_cores.get(rank, INF):
                full += 1
        return ncores, ngpus, full, len(ranks)

    def _rank_changed(self, ranks) -> None:
        """Items on *ranks* came, went or changed their interval: forget
        the free stretches kept for them (see
        :meth:`~flux_sched_base.planner.Planner.starts`)."""
        stretches, versions = self._stretches, self._rank_versions
        for rank in ranks:
            versions[rank] = versions.get(rank, 0) + 1
            if stretches:
                stretches.pop(rank, None)

    def ranks_version(self, ranks) -> tuple:
        """A key that changes whenever an item on any of *ranks* comes,
        goes or changes its end, or the resources change."""
        versions = self._rank_versions
        return (self._resources_version, *(versions.get(rank, 0) for rank in ranks))

    def _index(self, item: Item) -> None:
        self._rank_changed(item.ranks)
        for rank in item.ranks:
            self.by_rank.setdefault(rank, set()).add(item.jobid)

    def _unindex(self, item: Item) -> None:
        self._rank_changed(item.ranks)
        for rank in item.ranks:
            owners = self.by_rank.get(rank)
            if owners is not None:
                owners.discard(item.jobid)
                if not owners:
                    del self.by_rank[rank]

    # -- running jobs -------------------------------------------------------------

    def add_running(self, jobid: int, R, expiration: float) -> Item:
        """Record a running job holding *R* until *expiration* (0: never)."""
        if jobid in self.running:
            self._remove_running(self.running[jobid])
        ranks = parse_ranks(R)
        item = Item(
            jobid, None, rstamp.plan_end(expiration), R, ranks, self._vec(ranks)
        )
        self.running[jobid] = item
        self._running_ends.add((item.end, jobid))
        self.profile.add(None, item.end, item.vec, item.ranks)
        self.releases.add(item)
        self._index(item)
        self._running_changed(ranks)
        self._heavier(ranks, -INF, item.end)
        return item

    def _running_changed(self, ranks) -> None:
        steps = self._steps
        if steps:
            for rank in ranks:
                steps.pop(rank, None)
        if self._bounds:
            self._bounds_dirty.update(ranks)
        for watcher in self._watchers:
            watcher.update(ranks)

    def watch_running(self) -> set[int]:
        """A set that from now on receives every rank whose running jobs
        come, go or change their end, for a caller that keeps something
        per rank up to date (it empties the set as it reads it).  Kept
        until the resources change (:meth:`ranks_version`): a caller then
        starts again with a new one."""
        watcher: set[int] = set()
        self._watchers.append(watcher)
        return watcher

    def unwatch_running(self, watcher: set[int]) -> None:
        """Stop filling *watcher* (from :meth:`watch_running`)."""
        self._watchers = [w for w in self._watchers if w is not watcher]

    #: Shares :meth:`rank_bounds` keeps up to date at most (beyond, it
    #: forgets them all): each running job that comes or goes updates all.
    BOUNDS_KEPT = 16

    def rank_bounds(self, cores: int | None, gpus: int) -> tuple[SortedList, set]:
        """When the running jobs alone leave room for a share of *cores*
        (None: every core of the node) and *gpus* on each up rank:
        ``(bounds, unknown)``, where ``bounds`` is a sorted list of
        ``(time, rank)`` (``-inf``: room now; a rank too small for the
        share, or whose jobs never end, is left out) and ``unknown`` the
        ranks :meth:`running_steps` cannot say about.  Kept up to date as
        running jobs come and go."""
        key = (cores, gpus)
        kept = self._bounds
        dirty = self._bounds_dirty
        if dirty:
            for (c, g), (by_rank, bounds, unknown) in kept.items():
                for rank in dirty:
                    self._keep_bound(rank, c, g, by_rank, bounds, unknown)
            dirty.clear()
        found = kept.get(key)
        if found is None:
            if len(kept) >= self.BOUNDS_KEPT:
                kept.clear()
            found = kept[key] = ({}, SortedList(), set())
            for rank in self.up:
                self._keep_bound(rank, cores, gpus, *found)
        return found[1], found[2]

    def _keep_bound(self, rank, cores, gpus, by_rank, bounds, unknown) -> None:
        """Read *rank*'s bound for a share into the kept ``(by_rank,
        bounds, unknown)``, replacing what was kept for it; the sorted
        list is touched only when the bound moved (a small share often
        has room as before)."""
        old = by_rank.pop(rank, None)
        unknown.discard(rank)
        up = rank in self.up
        bound = self.rank_bound(rank, cores, gpus) if up else None
        if bound is None:
            if up:
                unknown.add(rank)
        else:
            by_rank[rank] = bound
            if bound == old:
                return
        if old is not None and old != INF:
            bounds.remove((old, rank))
        if bound is not None and bound != INF:
            bounds.add((bound, rank))

    def rank_bound(self, rank: int, cores: int | None, gpus: int) -> float | None:
        """When the running jobs on *rank* alone leave room for a share of
        *cores* (None: every core) and *gpus*: ``-inf`` if now, ``inf`` if
        never, None if :meth:`running_steps` cannot say."""
        steps = self.running_steps(rank)
        if steps is None:
            return None
        free_c, free_g, ends, freed_c, freed_g = steps[:5]
        total_c = self.node_cores.get(rank, 0)
        need_c = total_c if cores is None else cores
        if need_c > total_c or gpus > self._node_gpus.get(rank, 0):
            bound = INF
        elif need_c <= free_c and gpus <= free_g:
            bound = -INF
        else:
            k = 0
            if need_c > free_c:
                k = bisect.bisect_left(freed_c, need_c - free_c)
            if gpus > free_g:
                k = max(k, bisect.bisect_left(freed_g, gpus - free_g))
            bound = ends[k]
        return bound

    def running_steps(self, rank: int) -> tuple | None:
        """What the running jobs on *rank* leave free, and free over time:
        ``(free cores, free GPUs, ends, cores freed, GPUs freed, busy
        cores, busy GPUs)``.  ``ends`` is the sorted list of their planned
        ends; the next two lists count what is free again by each of them,
        cumulatively; the last two hold, for each ``k`` up to
        ``len(ends)``, the set of cores (GPUs) the jobs from the ``k``-th
        end on hold: those still running just after ``ends[k - 1]``.  Kept
        until a running job on the rank comes, goes or changes its end.
        None if two of them hold the same core or GPU, or one holds a core
        or GPU the rank does not list (a restart's hello may say so): then
        what they free is not the sum of their shares of the rank."""
        steps = self._steps
        if rank in steps:
            return steps[rank]
        running = self.running
        mine = []
        for jobid in self.by_rank.get(rank, ()):
            item = running.get(jobid)
            if item is not None:
                cores, gpus = item.ranks[rank]
                mine.append((item.end, jobid, cores, gpus))
        mine.sort()
        ends, freed_c, freed_g = [], [], []
        c = g = 0
        for end, _, cores, gpus in mine:
            c += len(cores)
            g += len(gpus)
            ends.append(end)
            freed_c.append(c)
            freed_g.append(g)
        busy_c = [frozenset()]
        busy_g = [frozenset()]
        for _, _, cores, gpus in reversed(mine):
            busy_c.append(busy_c[-1] | cores)
            busy_g.append(busy_g[-1] | gpus)
        busy_c.reverse()
        busy_g.reverse()
        own_c, own_g = self._rank_sets.get(rank, (frozenset(), frozenset()))
        if (
            c != len(busy_c[0])
            or g != len(busy_g[0])
            or not busy_c[0] <= own_c
            or not busy_g[0] <= own_g
        ):
            # Two jobs share a core, or one holds a core the rank does not
            # list (a restart's hello may say so): counts say nothing here.
            found = None
        else:
            found = (
                self.node_cores.get(rank, 0) - c,
                self._node_gpus.get(rank, 0) - g,
                ends,
                freed_c,
                freed_g,
                busy_c,
                busy_g,
            )
        steps[rank] = found
        return found

    def _remove_running(self, item: Item) -> None:
        self._running_changed(item.ranks)
        self._running_ends.remove((item.end, item.jobid))
        self.profile.remove(None, item.end, item.vec, item.ranks)
        self.releases.remove(item)
        self._unindex(item)
        del self.running[item.jobid]

    def release(self, jobid: int, R=None, final: bool = True, now: float = 0.0) -> None:
        """A running job released resources (all of them if *final*).

        A release before the job's planned end makes the plan lighter.  So
        does one after it: an overdue job (still in housekeeping past its
        limit) held its ranks now in the pool while the plan had it ended,
        so a reservation placed meanwhile could not use them from now on,
        and is placed at a later time no event may ever come back to.
        """
        item = self.running.get(jobid)
        if item is None:
            # Resources the plan never held went back to the pool: a copy
            # made since shows them busy.
            self.invalidate()
            return
        freed = set(item.ranks) if final or R is None else set(parse_ranks(R))
        if self.scratch is not None and not self.scratch.released(item, freed):
            self.invalidate()
        if item.end != now:
            self._lighten(freed & set(item.ranks))
        self._remove_running(item)
        if final or R is None:
            return
        remaining = set(item.ranks) - freed
        if not remaining:
            return
        kept = item.R.copy()
        kept.remove_ranks(IDset(sorted(freed & set(item.ranks))))
        ranks = {r: item.ranks[r] for r in remaining}
        rest = Item(jobid, None, item.end, kept, ranks, self._vec(ranks))
        self.running[jobid] = rest
        self._running_ends.add((rest.end, jobid))
        self.profile.add(None, rest.end, rest.vec, rest.ranks)
        self.releases.add(rest)
        self._index(rest)
        self._running_changed(rest.ranks)

    def set_expiration(self, jobid: int, expiration: float) -> None:
        """Move a running job's planned end (``sched.expiration``)."""
        item = self.running.get(jobid)
        if item is None:
            return
        end = rstamp.plan_end(expiration)
        if end == item.end:
            return
        self.invalidate()
        if end < item.end:
            self._lighten(item.ranks)
        else:
            self._heavier(item.ranks, item.end, end)
        self._running_ends.remove((item.end, jobid))
        self.profile.remove(None, item.end, item.vec, item.ranks)
        self.releases.remove(item)
        self._rank_changed(item.ranks)
        self._running_changed(item.ranks)
        item.end = end
        self._running_ends.add((end, jobid))
        self.profile.add(None, end, item.vec, item.ranks)
        self.releases.add(item)

    def next_running_end(self, t: float) -> float:
        """The first planned end of a running job after *t* (``inf``: none)."""
        ends = self._running_ends
        i = ends.bisect_right((t, INF))
        return ends[i][0] if i < len(ends) else INF

    def running_ends_between(self, low: float, high: float):
        """``(end, jobid)`` of the running jobs planned to end after *low*
        and by *high*, in order of end."""
        return self._running_ends.irange(
            (low, INF), (high, INF), inclusive=(False, True)
        )

    def first_planned_change(self) -> float:
        """The earliest time at which the plan changes by itself: a
        running job's planned end, a reservation's or promise's start, or
        the instance's expiration (``inf``: none).  Until then, what is
        free on each rank stays as it is now (a search from a later time
        finds no room a search from now did not)."""
        first = self.horizon()
        if self._running_ends:
            first = min(first, self._running_ends[0][0])
        if self._res_starts:
            first = min(first, self._res_starts[0][0])
        for start, _, _ in self.promises.values():
            first = min(first, start)
        return first

    def reserved_after(self, t: float):
        """``(start, jobid)`` of the reservations starting after *t*, in
        order of start."""
        return self._res_starts.irange(minimum=(t, INF), inclusive=(False, True))

    def reserved_by(self, t: float):
        """``(start, jobid)`` of the reservations starting at or before *t*."""
        return self._res_starts.irange(maximum=(t, INF))

    def running_ended_by(self, t: float) -> set[int]:
        """Ids of running jobs whose planned end is at or before *t*."""
        return {jobid for _, jobid in self._running_ends.irange(maximum=(t, INF))}

    # -- reservations ---------------------------------------------------------------

    def reserve(self, jobid: int, start: float, end: float, R) -> Item:
        """Hold *R* for *jobid* during ``[start, end)``; replaces any older one."""
        if jobid in self.reservations:
            self.drop(jobid)
        ranks = parse_ranks(R)
        item = Item(jobid, start, end, R, ranks, self._vec(ranks))
        item.checked = self.lighten_epoch
        self.reservations[jobid] = item
        self._res_starts.add((start, jobid))
        self._res_ends.add((end, jobid))
        self.profile.add(start, end, item.vec, item.ranks)
        self._index(item)
        reserved_on = self.reserved_on
        for rank in ranks:
            on = reserved_on.get(rank)
            if on is None:
                reserved_on[rank] = {jobid}
            else:
                on.add(jobid)
        self._heavier(ranks, start, end)
        item.validated = self.heavy_epoch
        return item

    def promise(self, jobid: int, start: float, end: float, units: int) -> None:
        """Record a count-based reservation: *units* whole nodes or cores
        for *jobid* during ``[start, end)``, chosen when it starts."""
        self.promises[jobid] = (start, end, units)

    def drop(self, jobid: int, lighten: bool = True) -> Item | None:
        """Remove *jobid*'s reservation (and promise), if any, and return
        the reservation item."""
        self.promises.pop(jobid, None)
        item = self.reservations.get(jobid)
        if item is None:
            return None
        if self.scratch is not None:
            self.scratch.reservation_dropped(item)
        self._settle_item(item)
        del self.reservations[jobid]
        self._res_starts.remove((item.start, jobid))
        self._res_ends.remove((item.end, jobid))
        self.profile.remove(item.start, item.end, item.vec, item.ranks)
        self._unindex(item)
        reserved_on = self.reserved_on
        for rank in item.ranks:
            on = reserved_on[rank]
            on.discard(jobid)
            if not on:
                del reserved_on[rank]
        if lighten:
            self._lighten(item.ranks)
        return item

    def ranks_freed_at(self, t: float, considered) -> set[int]:
        """Ranks on which a running job, or a reservation *considered*
        respects, ends exactly at *t*."""
        freed: set[int] = set()
        for _, other in self._running_ends.irange((t, -INF), (t, INF)):
            freed.update(self.running[other].ranks)
        reservations = self.reservations
        for _, other in self._res_ends.irange((t, -INF), (t, INF)):
            item = reservations[other]
            if considered(item):
                freed.update(item.ranks)
        return freed

    def reservations_overlapping(self, t: float, tend: float):
        """Reservations whose interval meets ``[t, tend)``."""
        reservations = self.reservations
        for start, jobid in self._res_starts.irange(
            maximum=(tend, -1), inclusive=(True, False)
        ):
            item = reservations[jobid]
            if item.end > t and start < tend:
                yield item

    # -- passes ------------------------------------------------------------------

    def begin_pass(self, now: float) -> None:
        """Start a scheduling pass at *now*: every reservation becomes *held*.

        A pass walks the queue in priority order and calls :meth:`settle`
        on each job it reaches; a question asked with ``exclude_held`` then
        respects only the reservations of jobs already settled.
        """
        self.now = now
        if self.scratch is not None and self.scratch.follows_changes:
            self.scratch.now = now  # every change since is in it
        else:
            self.scratch = None
        self.held_ids = set(self.reservations)
        self._held = None

    def settle_all(self) -> None:
        """The pass has reached every job that holds a reservation."""
        self.held_ids = set()
        self._held = None

    def held_profile(self) -> Profile:
        """Usage of the reservations still held in this pass."""
        if self._held is None:
            held = Profile(self.profile.capacity)
            for jobid in self.held_ids:
                item = self.reservations[jobid]
                held.add(item.start, item.end, item.vec)
            self._held = held
        return self._held

    def settle(self, jobid: int) -> None:
        """The pass reached *jobid*: its reservation is no longer held."""
        item = self.reservations.get(jobid)
        if item is not None:
            self._settle_item(item)

    def _settle_item(self, item: Item) -> None:
        if item.jobid in self.held_ids:
            self.held_ids.discard(item.jobid)
            if self._held is not None:
                self._held.remove(item.start, item.end, item.vec)

    def _considered(self, own: int | None, exclude_held: bool):
        held = self.held_ids

        def considered(item: Item) -> bool:
            if item.jobid == own:
                return False
            return not (exclude_held and item.jobid in held)

        return considered

    def horizon(self) -> float:
        """The instance expiration, or ``math.inf`` when there is none."""
        expiration = self.pool.expiration
        return expiration if expiration > 0.0 else INF

    def window_end(self, t: float, duration: float) -> float:
        """End of a window starting at *t* for a job of *duration*."""
        end = rstamp.expiration_for(t, duration, self.pool.expiration)
        return end if end > t else rstamp.plan_end(0.0)

    def window(self, duration: float):
        """:meth:`window_end` for one *duration*, as a function of the
        start (cheap to call many times in one question)."""
        if duration > 0.0 and not self.pool.expiration > 0.0:
            return lambda t: t + duration
        return lambda t: self.window_end(t, duration)

    def stats(self) -> dict:
        """Planner figures for ``stats-get``."""
        return {
            "running_jobs": len(self.running),
            "reserved_jobs": len(self.reservations) + len(self.promises),
            "profile_size": len(self.profile),
            "allocator_probes": self.probes,
        }
