"""Per-rank availability windows: which start times can a request use?

The aggregate :class:`~flux_sched_base.profile.Profile` checks a window
against the usage at each *instant*, but a job needs its resources
*throughout* its window: a long job may find enough free nodes at every
instant and still no node free for the whole window, because reservations
take different nodes at different times.  This module closes that gap rank
by rank.

For one rank, the plan's items give its free cores and GPUs as a step
function of time; the *valid starts* of a rank are the times ``t`` such
that the rank can host one node's share of the request during all of
``[t, t + duration)``.  Counting, over ranks, how many have ``t`` among
their valid starts gives the start times at which enough ranks could host
the job.  Constraints and properties are ignored, so the result is a
superset of what the allocator accepts: a time outside it can be skipped
without asking the allocator.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Iterable

INF = math.inf

#: Closed intervals ``[u, v]`` of start times, sorted and disjoint.
Intervals = list[tuple[float, float]]


class Shape:
    """What one node of an allocation needs, for availability windows.

    Attributes:
        cores: cores per node (None: every core of the node, exclusive).
        gpus: GPUs per node.
        nodes: how many ranks must be able to host that at once.
    """

    __slots__ = ("cores", "gpus", "nodes")

    def __init__(self, cores: int | None, gpus: int | None, nodes: int):
        self.cores = cores
        self.gpus = gpus
        self.nodes = nodes


def shape_of(
    request, node_cores: dict, node_gpus: dict, cache: dict | None = None
) -> Shape | None:
    """The per-node :class:`Shape` of *request*, or None if unknown.

    For a node-based request, each of ``nnodes`` ranks must host its share
    (all of the node if exclusive).  A slot-only request of ``nslots`` slots
    needs at least as many ranks as the largest node has slots to spare,
    each able to host one slot: a lower bound, never an over-estimate.
    *cache*, if given, keeps that per-node slot count between calls (reset
    it when the topology changes).
    """
    try:
        nnodes = request.nnodes
        nslots = request.nslots
        slot_size = request.slot_size
        gpu_per_slot = request.gpu_per_slot
        exclusive = request.exclusive
    except AttributeError:
        return None
    if nnodes > 0:
        if exclusive:
            # Every core of the node; GPUs as the allocator checks them.
            return Shape(None, gpu_per_slot, nnodes)
        per_node = nslots // nnodes
        return Shape(per_node * slot_size, per_node * gpu_per_slot, nnodes)
    if nslots <= 0 or slot_size <= 0:
        return None
    most = None if cache is None else cache.get((slot_size, gpu_per_slot))
    if most is None:
        most = 0
        for rank, cores in node_cores.items():
            slots = cores // slot_size
            if gpu_per_slot:
                slots = min(slots, node_gpus.get(rank, 0) // gpu_per_slot)
            most = max(most, slots)
        if cache is not None:
            cache[(slot_size, gpu_per_slot)] = most
    if most == 0:
        return None
    return Shape(slot_size, gpu_per_slot, -(-nslots // most))


def rank_starts(
    events: Iterable[tuple[float, int, int]],
    total_cores: int,
    total_gpus: int,
    shape: Shape,
    duration: float,
    floor: float,
    limit: float,
) -> Intervals:
    """Valid start times on one rank.

    Args:
        events: ``(time, dcores, dgpus)`` usage changes on the rank (time
            ``-inf`` for running jobs); every item gives one positive and,
            unless it never ends, one negative event.
        total_cores, total_gpus: the rank's resources.
        shape: what one node of the request needs.
        duration: window length (0: the window never ends).
        floor, limit: only starts in ``[floor, limit)`` are wanted.
    """
    return valid_starts(
        free_stretches(events, total_cores, total_gpus, shape), duration, floor, limit
    )


def free_stretches(
    events: Iterable[tuple[float, int, int]],
    total_cores: int,
    total_gpus: int,
    shape: Shape,
) -> Intervals:
    """The maximal stretches ``(a, b)`` of time during which one rank has
    room for *shape* (events and totals as in :func:`rank_starts`); the
    first may begin at ``-inf``, the last end at ``inf``.  They depend on
    the rank's items and the shape, not on the question's window, so a
    caller may keep them while the rank's items stay the same."""
    need_c = total_cores if shape.cores is None else shape.cores
    need_g = shape.gpus
    if need_c > total_cores or need_g > total_gpus:
        return []
    ordered = sorted(events)
    out: Intervals = []
    used_c = used_g = 0
    start = -INF  # start of the current free stretch, while free
    free = True
    i, n = 0, len(ordered)
    while True:
        # Free stretch [start, t) ends at the next time usage makes it busy.
        t = ordered[i][0] if i < n else INF
        while i < n and ordered[i][0] == t:
            used_c += ordered[i][1]
            used_g += ordered[i][2]
            i += 1
        now_free = total_cores - used_c >= need_c and total_gpus - used_g >= need_g
        if free and not now_free:
            out.append((start, t))
            free = False
        elif not free and now_free:
            start, free = t, True
        if t == INF:
            if free:
                out.append((start, INF))
            return out


def valid_starts(
    stretches: Intervals, duration: float, floor: float, limit: float
) -> Intervals:
    """Start times in ``[floor, limit)`` of windows of *duration* (0: no
    end) that lie inside one of a rank's :func:`free_stretches`."""
    out: Intervals = []
    for a, b in stretches:
        _emit(out, a, b, duration, floor, limit)
    return out


def first_start(stretches: Intervals, duration: float, floor: float) -> float:
    """The earliest start from *floor* of a window of *duration* (0: no
    end) inside one of a rank's :func:`free_stretches`; ``inf`` if none.
    :func:`valid_starts` finds one below *limit* exactly when this is
    below *limit*: the stretches are in time order, so the first that
    holds a window gives the earliest."""
    for a, b in stretches:
        u = max(a, floor)
        if duration > 0.0:
            if b - duration >= u:
                return u
        elif b == INF:
            return u
    return INF


def _emit(out: Intervals, a: float, b: float, duration, floor, limit) -> None:
    u = max(a, floor)
    if duration > 0.0:
        v = b - duration
    else:
        v = INF if b == INF else -INF
    if v >= u and u < limit:
        out.append((u, v))


def count_starts(per_rank: Iterable[Intervals], needed: int) -> Intervals:
    """Start times at which at least *needed* ranks have a valid start."""
    if needed <= 0:
        return [(-INF, INF)]
    events = []
    for intervals in per_rank:
        for u, v in intervals:
            events.append((u, 0))  # opening sorts before closing at a tie
            events.append((v, 1))
    events.sort()
    out: Intervals = []
    count = 0
    opened = None
    for t, kind in events:
        if kind == 0:
            count += 1
            if count == needed:
                opened = t
        else:
            if count == needed:
                out.append((opened, t))
            count -= 1
    return out


def intersect(a: Intervals, b: Intervals) -> Intervals:
    """The times in both *a* and *b* (sorted, disjoint closed intervals)."""
    out: Intervals = []
    i = j = 0
    while i < len(a) and j < len(b):
        u = max(a[i][0], b[j][0])
        v = min(a[i][1], b[j][1])
        if u <= v:
            out.append((u, v))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def contains(intervals: Intervals, t: float) -> bool:
    """Is *t* in one of the sorted, disjoint closed *intervals*?"""
    i = bisect.bisect_right(intervals, (t, INF)) - 1
    return i >= 0 and intervals[i][0] <= t <= intervals[i][1]


def starts_by_rank(
    ranks: Iterable[int],
    stretches_on: Callable[[int], Intervals],
    duration: float,
    floor: float,
    limit: float,
) -> dict[int, Intervals]:
    """Valid starts of each of *ranks* that has some (see
    :func:`valid_starts`); *stretches_on(rank)* gives the rank's
    :func:`free_stretches` for the request's shape, from the plan items the
    question respects.  :func:`count_starts` of the values gives the start
    times at which enough ranks can host the request."""
    out = {}
    for rank in ranks:
        starts = valid_starts(stretches_on(rank), duration, floor, limit)
        if starts:
            out[rank] = starts
    return out
