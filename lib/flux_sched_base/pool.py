"""The default resource pool of the reference schedulers.

flux-python's ``Rv1Pool`` formats a resource summary (``dumps()``, e.g.
``rank[0-1]/core[0-3]``) three times for every job: for the debug log
lines of ``alloc`` and ``free``, which are formatted even when the log
level drops them, and for the ``resource_summary`` annotation.  Each
builds ``IDset`` objects through the C bindings for every group of ranks
and every core list, which makes the summary about a sixth of a
scheduler's CPU time in a real broker.  :class:`Rv1SummaryPool` is
``Rv1Pool`` with the same summary computed from the pool's own sets in
plain Python, and the idsets of R (``to_dict``, once a job, for the KVS
and SUCCESS) likewise: equal strings and dicts, tested against
flux-python's.  Its ``alloc`` makes ``Rv1Pool``'s choice (worst fit:
most free cores first) from free counts, building the free core sets
only of the ranks it takes, where ``Rv1Pool`` builds them for every rank
at every allocation (on 64 nodes of 16 cores: 36 against 56 us an
allocation); one slot of cores, the commonest request, goes to the top
of a heap of the ranks by room (:class:`RoomIndex`) that the pool's own
allocations and frees keep current, without a sweep of the table; a
subclass that overrides the choice, and constrained requests, get
``Rv1Pool``'s own.  Its ``alloc``, ``free`` and
``register_alloc`` (the latter two with ``Rv1Pool``'s checks and errors)
format their log lines only when the log keeps them: a scratch copy's
silent log and a module logging at ``info`` never see the debug lines,
and no summary or job id is made for them.  Everything else is
``Rv1Pool``'s.  :class:`Pool` is the
facade flux-python's ``pool_class`` hook takes; :class:`~flux_sched_base.
scheduler.PlanningScheduler` names it, and ``pool-class=`` still selects
another.
"""

from __future__ import annotations

import functools
import heapq
import json
import syslog
import time
from collections.abc import Iterable, Mapping
from operator import itemgetter

from flux.hostlist import Hostlist
from flux.job import JobID
from flux.resource import InsufficientResources, ResourcePool
from flux.resource.ResourcePoolImplementation import ResourcePoolImplementation
from flux.resource.Rv1Pool import Rv1Pool


def _ranges(ordered: list[int]) -> str:
    """``0-2,5,7-8`` for sorted distinct ids (RFC 22 ranges)."""
    runs = []
    first = last = ordered[0]
    for i in ordered[1:]:
        if i != last + 1:
            runs.append(f"{first}-{last}" if last > first else str(first))
            first = i
        last = i
    runs.append(f"{first}-{last}" if last > first else str(first))
    return ",".join(runs)


def idset_text(ids: Iterable[int]) -> str:
    """An idset as R writes it: ``3``, ``0-2``, ``0-1,3-5,9`` (empty:
    ``""``)."""
    ordered = sorted(set(ids))
    return _ranges(ordered) if ordered else ""


def display_idset(ids: Iterable[int]) -> str:
    """An idset as resource summaries show it: ``3``, ``[0-2]``,
    ``[0-1,3-5,9]`` (brackets for more than one id; empty: ``""``)."""
    ordered = sorted(set(ids))
    if len(ordered) < 2:
        return "".join(map(str, ordered))
    return "[" + _ranges(ordered) + "]"


def _groups(ranks: Mapping[int, Mapping]) -> list[tuple[frozenset, frozenset, list]]:
    """``(cores, gpus, ranks)`` of the ranks that hold the same cores and
    GPUs, in order of their lowest rank."""
    groups: dict[tuple, list[int]] = {}
    for rank, info in ranks.items():
        key = (frozenset(info["cores"]), frozenset(info["gpus"]))
        groups.setdefault(key, []).append(rank)
    return [(c, g, m) for (c, g), m in sorted(groups.items(), key=lambda x: min(x[1]))]


def summary(ranks: Mapping[int, Mapping]) -> str:
    """The resource summary of an Rv1 rank table (``rank -> {"cores":
    set, "gpus": set, ...}``): ranks with the same cores and GPUs share a
    part, parts in order of their lowest rank, joined by spaces."""
    parts = []
    for cores, gpus, members in _groups(ranks):
        part = f"rank{display_idset(members)}/core{display_idset(cores)}"
        if gpus:
            part += ",gpu" + display_idset(gpus)
        parts.append(part)
    return " ".join(parts)


_by_free = itemgetter(0, 1)


def _discrete(count) -> bool:
    """Whether a request's count lists discrete values (refused by
    ``Rv1Pool.alloc``)."""
    return count is not None and count._values is not None


def lowest_free(info: Mapping, ncores: int, ngpus: int) -> tuple[frozenset, frozenset]:
    """The *ncores* lowest free cores and *ngpus* lowest free GPUs of a rank."""
    cores = sorted(info["cores"] - info["allocated_cores"])[:ncores]
    gpus = sorted(info["gpus"] - info["allocated_gpus"])[:ngpus] if ngpus else ()
    return frozenset(cores), frozenset(gpus)


def one_slot_request(request) -> bool:
    """Is *request* one slot of cores and no GPUs, not exclusive (what
    :func:`one_slot_rank` places)?"""
    return (
        request.nnodes == 0
        and request.nslots == 1
        and request.nslots_max == 1
        and not request.exclusive
        and request.gpu_per_slot == 0
    )


def rank_room(info: Mapping) -> tuple[int, int]:
    """``(free cores, free GPUs)`` of a rank table entry."""
    return room_left(
        info["cores"], info["gpus"], info["allocated_cores"], info["allocated_gpus"]
    )


def room_left(cores, gpus, used, gused) -> tuple[int, int]:
    """``(free cores, free GPUs)`` of a rank with *cores* and *gpus* of
    which *used* and *gused* are held."""
    free = len(cores) - len(used)
    # Cores held outside the rank's own set (a job's R from a hello may
    # name them) make the count a set difference.
    if used and not used <= cores:
        free = len(cores - used)
    gfree = 0
    if gpus or gused:
        gfree = len(gpus) - len(gused) if gused <= gpus else len(gpus - gused)
    return free, gfree


def one_slot_rank(table: Iterable[tuple[int, Mapping]], size: int) -> int | None:
    """Where ``Rv1Pool`` puts one slot of *size* cores and no GPUs: of the
    ranks of *table* (``(rank, info)`` in the pool's table order, *info* a
    rank table entry), the first of its sorted candidates, found in one
    sweep: an up rank with the most free cores, then GPUs, the first
    among ties; None if no up rank has *size* free cores."""
    best = None
    best_room = (-1, -1)
    for rank, info in table:
        if not info["up"]:
            continue
        room = rank_room(info)
        if room[0] >= size and room > best_room:
            best, best_room = rank, room
    return best


class RoomIndex:
    """The up ranks of a rank table by room, most free cores, then GPUs,
    then table order first: :func:`one_slot_rank`'s answer for the whole
    table without a sweep of it.

    A heap of ``(-free cores, -free GPUs, position, rank)`` keys with the
    current key of each rank beside it; a rank whose room changes gets a
    new key pushed, and keys no longer current are dropped when they reach
    the top.  It describes *ranks* as they were at pool *generation*, but
    for the ranks :meth:`touch` named since its last answer, read again
    before the next one (a scratch copy moves the same ranks many times
    between two allocations): the pool names the ranks its own alloc and
    free change, and any other change (a rank marked down, Rv1Pool's own
    allocation) leaves it behind the pool's generation, so the pool builds
    a new one.
    """

    __slots__ = ("ranks", "generation", "_position", "_keys", "_heap", "_touched")

    def __init__(self, ranks: Mapping[int, Mapping], generation: int) -> None:
        self.ranks = ranks
        self.generation = generation
        self._position = {rank: i for i, rank in enumerate(ranks)}
        self._keys: dict[int, tuple] = {}
        for rank, info in ranks.items():
            if info["up"]:
                free, gfree = rank_room(info)
                self._keys[rank] = (-free, -gfree, self._position[rank], rank)
        self._heap = list(self._keys.values())
        heapq.heapify(self._heap)
        self._touched: set[int] = set()

    def touch(self, ranks: Iterable[int]) -> None:
        """Read *ranks* again before the next answer."""
        self._touched.update(ranks)

    def update(self, rank: int) -> None:
        """Take the room *rank* has now."""
        info = self.ranks[rank]
        keys = self._keys
        if not info["up"]:
            keys.pop(rank, None)
            return
        free, gfree = rank_room(info)
        key = (-free, -gfree, self._position[rank], rank)
        if keys.get(rank) == key:
            return
        keys[rank] = key
        heap = self._heap
        heapq.heappush(heap, key)
        if len(heap) > 4 * len(keys) + 64:  # mostly keys no longer current
            self._heap = list(keys.values())
            heapq.heapify(self._heap)

    def roomiest(self, size: int) -> int | None:
        """The up rank with the most room (as :func:`one_slot_rank` ranks
        them) if it has *size* free cores, else None."""
        touched = self._touched
        if touched:
            for rank in touched:
                self.update(rank)
            touched.clear()
        heap, keys = self._heap, self._keys
        while heap:
            top = heap[0]
            if keys.get(top[3]) == top:
                return top[3] if -top[0] >= size else None
            heapq.heappop(heap)
        return None


def log_keeps(log, level: int) -> bool:
    """Would *log* (a callable taking a syslog level and a line, or None)
    keep a line at *level*?  No for None and below a logger's ``level``
    threshold (flux-python's ``BrokerLogger``); yes for any other
    callable.  Lines are formatted only when kept."""
    if log is None:
        return False
    threshold = getattr(log, "level", None)
    return not isinstance(threshold, int) or level <= threshold


@functools.lru_cache(maxsize=4096)
def _nodelist(hosts: str) -> str:
    """The compressed host list of comma-separated *hosts* (most jobs
    land on hosts another job had: worth remembering)."""
    return str(Hostlist(hosts))


class Rv1SummaryPool(Rv1Pool):
    """flux-python's ``Rv1Pool`` with :meth:`dumps` and R's idsets
    formatted in plain Python, and log lines formatted only when kept."""

    def dumps(self) -> str:
        """The compact resource summary (as ``Rv1Pool.dumps``)."""
        return summary(self._ranks)

    def alloc(self, jobid: int, request) -> Rv1Pool:
        """Allocate *request* for *jobid*: the resources ``Rv1Pool.alloc``
        would pick, the same result, bookkeeping and log line; raises
        ``InsufficientResources`` or ``InfeasibleRequest`` as it does."""
        if not self.own_choice(request):
            return super().alloc(jobid, request)
        picks, nslots = self._worst_fit(request)
        for rank, cores, gpus in picks:
            info = self._ranks[rank]
            info["allocated_cores"] |= cores
            info["allocated_gpus"] |= gpus
        result = self.grant(picks, nslots)
        if request.duration > 0.0:
            end = time.time() + request.duration
        else:
            end = self._expiration if self._expiration > 0.0 else 0.0
        self._job_state[jobid] = (end, result)
        self.touched([rank for rank, _, _ in picks])
        if self._logs(syslog.LOG_DEBUG):
            self.log(syslog.LOG_DEBUG, f"alloc: {JobID(jobid).f58}: {result.dumps()}")
        return result

    def own_choice(self, request) -> bool:
        """Does :meth:`alloc` choose *request*'s resources itself (worst
        fit from free counts), rather than ``Rv1Pool``'s own code?"""
        cls = type(self)
        return not (
            request.constraint is not None
            or cls._sort_candidates is not Rv1Pool._sort_candidates
            or cls._select_resources is not Rv1Pool._select_resources
            or _discrete(request.node_count)
            or _discrete(request.slot_count)
        )

    def places_by_one_slot_rank(self, request) -> bool:
        """Does :meth:`alloc` place *request* by :func:`one_slot_rank` and
        :func:`lowest_free` (one slot of cores, no GPUs, and no subclass
        placing it otherwise)?"""
        cls = type(self)
        return (
            one_slot_request(request)
            and self.own_choice(request)
            and cls.alloc is Rv1SummaryPool.alloc
            and cls._worst_fit is Rv1SummaryPool._worst_fit
            and cls._one_slot is Rv1SummaryPool._one_slot
        )

    def grant(self, picks, nslots: int) -> Rv1Pool:
        """The allocation :meth:`alloc` returns for *picks* (``[(rank,
        cores, gpus)]``, ranks of this pool) holding *nslots* slots, made
        without holding anything in this pool."""
        taken = {rank for rank, _, _ in picks}
        ranks = {}
        for rank, cores, gpus in picks:
            ranks[rank] = {
                "hostname": self._ranks[rank]["hostname"],
                "cores": cores,
                "gpus": gpus,
                "allocated_cores": set(cores),
                "allocated_gpus": set(gpus),
                "up": True,
            }
        # Instance-local properties (a leading '+', RFC 20) stay out of a
        # job's R, as flux-python's pinned Rv1Pool leaves them out.
        properties = {}
        for name, members in self._properties.items():
            if not name.startswith("+") and not members.isdisjoint(taken):
                properties[name] = members & taken
        result = type(self)._from_state(
            expiration=0.0,
            starttime=0.0,
            has_nodelist=True,
            properties=properties,
            ranks=ranks,
            scheduling=self.scheduling,
            job_state={},
            log=self.log,
            source=self,
        )
        result._nslots = nslots
        return result

    def _logs(self, level: int) -> bool:
        """Would the pool's log keep a line at *level*?  No for the silent
        default (scratch copies) and below a logger's ``level`` threshold
        (flux-python's ``BrokerLogger``); yes for any other callable."""
        log = self.log
        if getattr(log, "__func__", None) is ResourcePoolImplementation.log:
            return False
        return log_keeps(log, level)

    def register_alloc(self, jobid: int, R: Rv1Pool) -> None:
        """Hold *R*, an allocation made elsewhere (a running job at hello,
        an R chosen on a scratch copy), as ``Rv1Pool.register_alloc``
        does; its info line is formatted only when it would be logged."""
        missing = R._ranks.keys() - self._ranks.keys()
        if missing:
            raise ValueError(
                f"allocation contains ranks not in resource pool: {sorted(missing)}"
            )
        self._set_allocated(R)
        self._job_state[jobid] = (R.get_expiration(), R)
        self.touched(R._ranks)
        if self._logs(syslog.LOG_INFO):
            self.log(syslog.LOG_INFO, f"hello: {JobID(jobid).f58}: {R.dumps()}")

    def free(self, jobid: int, R=None, final: bool = False) -> None:
        """Give back a job's resources: all of them (*R* None, or *final*)
        or the ranks of *R* (a partial free), with ``Rv1Pool.free``'s checks
        and errors; its debug line is formatted only when it would be
        logged."""
        tracked = self._job_state.get(jobid)
        if R is not None and tracked is not None:
            held = tracked[1]._ranks
            extra = R._ranks.keys() - held.keys()
            if extra:
                raise ValueError(
                    f"free: {JobID(jobid).f58}: R contains ranks not in "
                    f"job allocation: {extra}"
                )
            if final and (
                held.keys() - R._ranks.keys()
                or any(
                    info["cores"] != held[rank]["cores"]
                    or info["gpus"] != held[rank]["gpus"]
                    for rank, info in R._ranks.items()
                )
            ):
                raise ValueError(
                    f"free: {JobID(jobid).f58}: final R mismatch: "
                    f"got {R.dumps()}, expected {tracked[1].dumps()}"
                )
        if final or R is None:
            if tracked is None:
                return
            del self._job_state[jobid]
            freed = tracked[1]
        else:
            freed = R
            if tracked is not None:
                rest = tracked[1]._ranks.keys() - R._ranks.keys()
                self._job_state[jobid] = (
                    tracked[0],
                    tracked[1]._copy_from_ranks(rest),
                )
        ranks = self._ranks
        for rank, info in freed._ranks.items():
            mine = ranks.get(rank)
            if mine is not None:
                mine["allocated_cores"] -= info["cores"]
                mine["allocated_gpus"] -= info["gpus"]
        if self._logs(syslog.LOG_DEBUG):
            text = f"free: {JobID(jobid).f58}: {freed.dumps()}"
            self.log(syslog.LOG_DEBUG, text + (" (final)" if final else ""))
        self.touched([rank for rank in freed._ranks if rank in ranks])

    def touched(self, ranks: Iterable[int]) -> None:
        """Count a change to the rank table that touched only *ranks*
        (their allocated cores and GPUs, or up flags), made since the last
        generation: bumps the generation, and keeps the room index current
        if it was before the change."""
        index = self._current_room_index()
        self._bump()
        if index is not None:
            index.touch(ranks)
            index.generation = self.generation

    def update_expiration(self, jobid: int, expiration: float) -> None:
        """As ``Rv1Pool.update_expiration``; no rank's room changes, so
        the room index stays current."""
        index = self._current_room_index()
        super().update_expiration(jobid, expiration)
        if index is not None:
            index.generation = self.generation

    def room_index(self) -> RoomIndex:
        """The up ranks by room (:class:`RoomIndex`) as they are now: the
        one kept with the pool while no change it did not follow came in
        between, else a new one."""
        index = self._current_room_index()
        if index is None:
            index = self._room = RoomIndex(self._ranks, self.generation)
        return index

    def _current_room_index(self) -> RoomIndex | None:
        # Kept in the instance's own dict: Rv1Pool's copies are made
        # without __init__ and start without one.
        index = self.__dict__.get("_room")
        if (
            index is None
            or index.ranks is not self._ranks
            or index.generation != self.generation
        ):
            return None
        return index

    def _worst_fit(self, request) -> tuple[list, int]:
        """``(picks, nslots)``: *picks* ``[(rank, cores, gpus)]`` as
        ``Rv1Pool._select_resources`` chooses them, found from free counts."""
        exclusive = request.exclusive
        size = request.slot_size
        per_gpu = request.gpu_per_slot
        if one_slot_request(request):
            return self._one_slot(request, size)
        # (free cores, free gpus, rank, info) of the up ranks with room for
        # one slot (an idle rank, if exclusive).
        room = []
        for rank, info in self._ranks.items():
            if not info["up"]:
                continue
            free, gfree = rank_room(info)
            if free < (len(info["cores"]) if exclusive else size) or gfree < per_gpu:
                continue
            room.append((free, gfree, rank, info))
        # Most free cores, then GPUs, first; ties in rank table order.
        room.sort(key=_by_free, reverse=True)
        picks = []
        if request.nnodes > 0:
            least, most = request.nnodes, request.nnodes_max
            per_node = request.nslots // least
            for free, gfree, rank, info in room:
                if most is not None and len(picks) >= most:
                    break
                if exclusive:
                    if free < len(info["cores"]):
                        continue
                    picks.append((rank, *lowest_free(info, free, gfree)))  # all free
                    continue
                ncores, ngpus = per_node * size, per_node * per_gpu
                if free < ncores or gfree < ngpus:
                    continue
                picks.append((rank, *lowest_free(info, ncores, ngpus)))
            if len(picks) < least:
                self._check_feasibility(request)
                raise InsufficientResources("insufficient resources")
            return picks, per_node * len(picks)
        least, most = request.nslots, request.nslots_max
        granted = 0
        for free, gfree, rank, info in room:
            if most is not None and granted >= most:
                break
            fits = free // size
            if per_gpu > 0:
                fits = min(fits, gfree // per_gpu)
            if most is not None:
                fits = min(fits, most - granted)
            if fits > 0:
                picks.append((rank, *lowest_free(info, fits * size, fits * per_gpu)))
                granted += fits
        if granted < least:
            self._check_feasibility(request)
            raise InsufficientResources("insufficient resources")
        return picks, granted

    def _one_slot(self, request, size: int) -> tuple[list, int]:
        """:meth:`_worst_fit` for one slot of *size* cores and no GPUs
        (see :func:`one_slot_rank`)."""
        best = self.room_index().roomiest(size)
        if best is None:
            # Rv1Pool's own check refuses one slot only if no rank, up or
            # down, has *size* cores; the usual answer is found at the first.
            own_check = type(self)._check_feasibility is Rv1Pool._check_feasibility
            if not own_check or not any(
                len(info["cores"]) >= size for info in self._ranks.values()
            ):
                self._check_feasibility(request)
            raise InsufficientResources("insufficient resources")
        return [(best, *lowest_free(self._ranks[best], size, 0))], 1

    def _build_dict(self) -> dict:
        # R as Rv1Pool writes it (to_dict, encode); only the node list
        # still goes through flux-python's Hostlist, whose compression
        # rules are the C library's (once for each distinct list).
        R_lite = []
        for cores, gpus, members in _groups(self._ranks):
            children = {"core": idset_text(cores)}
            if gpus:
                children["gpu"] = idset_text(gpus)
            R_lite.append({"rank": idset_text(members), "children": children})
        execution: dict = {
            "R_lite": R_lite,
            "starttime": self._starttime,
            "expiration": self._expiration,
        }
        nslots = getattr(self, "_nslots", 0)
        if nslots > 0:
            execution["nslots"] = nslots
        if getattr(self, "_has_nodelist", False):
            hosts = (self._ranks[rank]["hostname"] for rank in sorted(self._ranks))
            execution["nodelist"] = [_nodelist(",".join(hosts))]
        if self._properties:
            execution["properties"] = {
                name: idset_text(ranks)
                for name, ranks in sorted(self._properties.items())
                if ranks
            }
        R = {"version": 1, "execution": execution}
        if self.scheduling:
            R["scheduling"] = self.scheduling
        return R


class VersionedPool(ResourcePool):
    """A facade over the implementation :attr:`impl_classes` names for
    R's version; keyword arguments go to that class."""

    #: R version -> implementation class.
    impl_classes: dict = {1: Rv1SummaryPool}
    #: Keyword arguments of this class, unless the caller's override them.
    defaults: dict = {}

    def __init__(self, R=None, log=None, **kwargs):
        if not isinstance(R, ResourcePoolImplementation):
            if isinstance(R, str):
                R = json.loads(R)
            version = R.get("version", 1) if isinstance(R, Mapping) else 1
            impl_class = self.impl_classes.get(version)
            if impl_class is None:
                raise ValueError(
                    f"R version {version} not supported by {type(self).__name__}"
                )
            R = impl_class(R, log=log, **{**self.defaults, **kwargs})
        super().__init__(R)


class Pool(VersionedPool):
    """The reference schedulers' pool: :class:`Rv1SummaryPool` for Rv1."""


__all__ = [
    "Pool",
    "log_keeps",
    "lowest_free",
    "one_slot_rank",
    "rank_room",
    "room_left",
    "RoomIndex",
    "one_slot_request",
    "Rv1SummaryPool",
    "VersionedPool",
    "display_idset",
    "idset_text",
    "summary",
]
