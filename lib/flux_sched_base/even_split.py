"""Even splits of a request over nodes, and slot ids that match across them.

The placement rules of :mod:`flux_sched_base.split_pool`, as pure functions
over *node views*: ``(rank, cores, gpus)`` with the ids a node offers (its
free ids when allocating, all its ids when judging feasibility).

- :func:`layouts`: the even splits of a number of slots, fewest nodes
  first; :func:`near_layouts`: the splits as even as can be (shares one
  slot apart), for a count no even split allows;
- :class:`Rooms`: nodes grouped by the slots they have room for, with the
  tightest that still hold a share first (best fit, the smallest
  sufficient free space);
- :func:`matching`: nodes that all offer one same set of core ids and one
  same set of GPU ids, so that one ``CUDA_VISIBLE_DEVICES`` value (or one
  core binding) is right on every node of the allocation.

Finding the most nodes that share a given number of ids is a hard
combinatorial problem in general; :func:`matching` tries a few id sets per
distinct pattern of offered ids and is exact when the nodes offer
identical ids (an idle machine), when one pattern's nodes suffice, and
when two nodes are wanted and one of them has one of the
:data:`GROW_SEEDS` tightest patterns.  It never returns ids that do not
match.
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence

#: ``(rank, cores, gpus)``: the core and GPU ids a node offers.
NodeView = tuple[int, frozenset, frozenset]

#: One node's share of an allocation: ``(rank, cores, gpus)``.
Share = tuple[int, frozenset, frozenset]

#: A split of slots over nodes: ``(nodes, per_node, short)``, *short* of
#: the nodes holding one slot fewer than *per_node*.
Layout = tuple[int, int, int]


def slots_on(cores: frozenset, gpus: frozenset, slot_size: int, gpu_per_slot: int):
    """How many slots of *slot_size* cores and *gpu_per_slot* GPUs fit in
    the given ids."""
    slots = len(cores) // slot_size
    if gpu_per_slot:
        slots = min(slots, len(gpus) // gpu_per_slot)
    return slots


def _divisors(total: int) -> list[int]:
    small, large = [], []
    i = 1
    while i * i <= total:
        if total % i == 0:
            small.append(i)
            if i * i != total:
                large.append(total // i)
        i += 1
    return small + large[::-1]


def layouts(total: int, capacities: Sequence[int]) -> Iterator[Layout]:
    """The even splits of *total* slots, fewest nodes first, given the
    slots each node could hold (*capacities*, largest first).

    Yields ``(nodes, per_node, 0)`` with ``nodes * per_node == total`` and
    at least *nodes* of the capacities >= *per_node*.
    """
    if total < 1 or not capacities or capacities[0] < 1:
        return
    fewest = -(-total // capacities[0])
    for nodes in _divisors(total):
        if nodes < fewest:
            continue
        if nodes > len(capacities):
            return
        per_node = total // nodes
        if capacities[nodes - 1] >= per_node:
            yield nodes, per_node, 0


def near_layouts(total: int, capacities: Sequence[int]) -> Iterator[Layout]:
    """The splits of *total* slots as even as can be, fewest nodes first:
    for a count no even split allows (5 slots where a node holds 2).

    Yields ``(nodes, per_node, short)``: *nodes* nodes that can each hold
    *per_node* slots, of which *short* get one slot fewer, so that
    ``nodes * per_node - short == total`` and ``0 <= short < nodes``.
    """
    if total < 1 or not capacities or capacities[0] < 1:
        return
    for nodes in range(-(-total // capacities[0]), min(total, len(capacities)) + 1):
        per_node = -(-total // nodes)
        if capacities[nodes - 1] >= per_node:
            yield nodes, per_node, nodes * per_node - total


def _secondary(view: NodeView) -> tuple:
    """Among nodes with the same room: fewest free GPUs, then cores, then
    the lowest rank (a job without GPUs goes where GPUs are taken rather
    than strand free GPUs behind its cores)."""
    rank, cores, gpus = view
    return (len(gpus), len(cores), rank)


class Rooms:
    """Nodes grouped by how many slots of one size each has room for.

    Built once per allocation, it answers "how many nodes hold *k* slots"
    and "which ones, tightest first" without a sort key per node.

    Args:
        views: the nodes (in rank order).
        slot_size, gpu_per_slot: the slot.
    """

    def __init__(self, views: Iterable[NodeView], slot_size: int, gpu_per_slot: int):
        self.slot = (slot_size, gpu_per_slot)
        by_room: dict[int, list[NodeView]] = defaultdict(list)
        # One room per distinct (cores, GPUs) count: many nodes share one.
        room_of: dict[tuple[int, int], int] = {}
        for view in views:
            sizes = (len(view[1]), len(view[2]))
            room = room_of.get(sizes)
            if room is None:
                room = sizes[0] // slot_size
                if gpu_per_slot:
                    room = min(room, sizes[1] // gpu_per_slot)
                room_of[sizes] = room
            if room:
                by_room[room].append(view)
        self.by_room = dict(by_room)
        #: Distinct rooms, smallest first.
        self.rooms = sorted(by_room)
        self._at_least: dict[int, int] = {}
        count = 0
        for room in reversed(self.rooms):
            count += len(by_room[room])
            self._at_least[room] = count

    def total(self) -> int:
        """Slots the nodes have room for, in all."""
        return sum(room * len(views) for room, views in self.by_room.items())

    def at_least(self, per_node: int) -> int:
        """How many nodes have room for *per_node* slots."""
        for room in self.rooms:
            if room >= per_node:
                return self._at_least[room]
        return 0

    def fitting(self, per_node: int) -> list[NodeView]:
        """The nodes with room for *per_node* slots, least room first."""
        return [
            view
            for room in self.rooms
            if room >= per_node
            for view in self.by_room[room]
        ]

    def tightest(self, per_node: int, count: int | None) -> list[NodeView]:
        """Up to *count* (all if None) of the nodes with room for
        *per_node* slots: the least room first (best fit); among nodes
        with the same room, where only some are taken, the fewest free
        GPUs, then cores, then the lowest rank."""
        out: list[NodeView] = []
        for room in self.rooms:
            if room < per_node:
                continue
            views = self.by_room[room]
            if count is not None and len(out) + len(views) > count:
                out += heapq.nsmallest(count - len(out), views, key=_secondary)
                return out
            out += views
        return out


def lowest_shares(views: Iterable[NodeView], ncores: int, ngpus: int) -> list[Share]:
    """Each node's *ncores* lowest core ids and *ngpus* lowest GPU ids."""
    return [
        (rank, frozenset(sorted(cores)[:ncores]), frozenset(sorted(gpus)[:ngpus]))
        for rank, cores, gpus in views
    ]


def _pick(ids: frozenset, count: int, weight: dict[int, int] | None) -> frozenset:
    """*count* ids of *ids*: the lowest, or those offered by the most nodes
    (by *weight*, then lowest)."""
    if weight is None:
        return frozenset(sorted(ids)[:count])
    return frozenset(sorted(ids, key=lambda i: (-weight.get(i, 0), i))[:count])


#: Seeds (distinct free-id patterns, tightest first) from which
#: :func:`matching` grows an intersection when the quick id sets fail.
GROW_SEEDS = 16


def matching(
    views: Sequence[NodeView],
    least: int,
    most: int | None,
    ncores: int,
    ngpus: int,
    slot_size: int,
    gpu_per_slot: int,
) -> list[Share] | None:
    """Nodes that all offer the same *ncores* core ids and *ngpus* GPU ids.

    Args:
        views: nodes that each hold the share by count (at least *ncores*
            cores and *ngpus* GPUs offered), in rank order.
        least: the fewest nodes wanted.
        most: the most nodes wanted (None: as many as share the ids).
        ncores, ngpus: the share's size on each node.
        slot_size, gpu_per_slot: the slot, for best fit among the nodes.

    Returns the shares (the same ids on every node), on the nodes with the
    least room among those that offer the ids (then in rank order), or
    None if no id set tried is offered by *least* nodes.  Nodes are grouped by the pattern of ids
    they offer, and id sets are tried pattern by pattern, tightest first:
    the pattern's lowest ids and its ids offered by the most nodes; if
    none is offered by enough nodes, the ids common to a pattern and the
    patterns that keep the most of them in common, added one by one (for
    the first :data:`GROW_SEEDS` patterns).  With a fixed count (*least*
    == *most*) the first id set offered by enough nodes wins; otherwise
    the one offered by the most nodes.
    """
    if least < 1 or len(views) < least:
        return None
    patterns: dict[tuple[frozenset, frozenset], list[NodeView]] = {}
    for view in views:
        patterns.setdefault((view[1], view[2]), []).append(view)
    if len(patterns) == 1:
        ((cores, gpus),) = patterns
        chosen = views if most is None else views[:most]
        return _shares(chosen, _pick(cores, ncores, None), _pick(gpus, ngpus, None))
    search = _IdSearch(patterns, least, most, ncores, ngpus, slot_size, gpu_per_slot)
    found = search.run()
    if found is None:
        return None
    cset, gset = found
    # The nodes offering the ids, tightest pattern first, then rank order.
    chosen = [
        view
        for pattern in sorted(patterns, key=search.room)
        if cset <= pattern[0] and gset <= pattern[1]
        for view in patterns[pattern]
    ]
    return _shares(chosen if most is None else chosen[:most], cset, gset)


class _IdSearch:
    """The id sets :func:`matching` tries, and the best found so far."""

    def __init__(self, patterns, least, most, ncores, ngpus, slot_size, gpu_per_slot):
        self.patterns = patterns
        self.least, self.most = least, most
        self.ncores, self.ngpus = ncores, ngpus
        self.slot = (slot_size, gpu_per_slot)
        self.enough = least if least == most else most  # stop at this many
        self.core_weight: dict[int, int] = {}
        self.gpu_weight: dict[int, int] = {}
        for (cores, gpus), members in patterns.items():
            for i in cores:
                self.core_weight[i] = self.core_weight.get(i, 0) + len(members)
            for i in gpus:
                self.gpu_weight[i] = self.gpu_weight.get(i, 0) + len(members)
        self.seeds = sorted(patterns, key=self.room)
        self.tried: set[tuple[frozenset, frozenset]] = set()
        self.best: tuple[int, frozenset, frozenset] | None = None

    def room(self, pattern) -> tuple:
        """Sort key of a pattern: least room first, as in :class:`Rooms`."""
        cores, gpus = pattern
        return (slots_on(cores, gpus, *self.slot), len(gpus), len(cores))

    def _done(self) -> bool:
        best = self.best
        return best is not None and self.enough is not None and best[0] >= self.enough

    def run(self) -> tuple[frozenset, frozenset] | None:
        """The best id set found, ``(cores, gpus)``, or None."""
        for cores, gpus in self.seeds:
            for weighted in (False, True):
                self.offer(
                    _pick(cores, self.ncores, self.core_weight if weighted else None),
                    _pick(gpus, self.ngpus, self.gpu_weight if weighted else None),
                )
            if self._done():
                break
        if not self._done():
            for seed in self.seeds[:GROW_SEEDS]:
                common = self.grow(seed)
                if common is not None:
                    cores, gpus = common
                    self.offer(
                        _pick(cores, self.ncores, None), _pick(gpus, self.ngpus, None)
                    )
                    if self._done():
                        break
        return None if self.best is None else self.best[1:]

    def offer(self, cset: frozenset, gset: frozenset) -> None:
        """Count the nodes offering *cset* and *gset*; keep the best."""
        if (cset, gset) in self.tried:
            return
        self.tried.add((cset, gset))
        # No more nodes offer a set than offer its rarest id.
        bound = min(
            [self.core_weight[i] for i in cset] + [self.gpu_weight[i] for i in gset],
            default=sum(len(m) for m in self.patterns.values()),
        )
        best = self.best
        if bound < self.least or (best is not None and bound <= best[0]):
            return
        offered = sum(
            len(members)
            for (c, g), members in self.patterns.items()
            if cset <= c and gset <= g
        )
        if offered >= self.least and (best is None or offered > best[0]):
            self.best = (offered, cset, gset)

    def grow(self, seed) -> tuple[frozenset, frozenset] | None:
        """Ids common to *seed* and the patterns added one by one, each
        the one that keeps the most room in common, until *least* nodes
        share them; None if the room runs out first."""
        cores, gpus = seed
        count = len(self.patterns[seed])
        used = {seed}
        while count < self.least:
            pick = None
            for pattern, members in self.patterns.items():
                if pattern in used:
                    continue
                c, g = cores & pattern[0], gpus & pattern[1]
                if len(c) < self.ncores or len(g) < self.ngpus:
                    continue
                score = (*self.room((c, g)), len(members))
                if pick is None or score > pick[0]:
                    pick = (score, pattern, c, g)
            if pick is None:
                return None
            _, pattern, cores, gpus = pick
            used.add(pattern)
            count += len(self.patterns[pattern])
        return cores, gpus


def _shares(chosen: Iterable[NodeView], cores: frozenset, gpus: frozenset):
    return [(rank, cores, gpus) for rank, _, _ in chosen]


def shorten(shares: list[Share], short: int, ncores: int, ngpus: int) -> list[Share]:
    """Cut the last *short* shares down to their *ncores* lowest core ids
    and *ngpus* lowest GPU ids (one slot fewer): matching shares stay
    matching, the shorter ones a prefix of the others."""
    if short <= 0:
        return shares
    keep = len(shares) - short
    return shares[:keep] + [
        (rank, frozenset(sorted(cores)[:ncores]), frozenset(sorted(gpus)[:ngpus]))
        for rank, cores, gpus in shares[keep:]
    ]
