"""A resource pool that splits requests evenly and matches slot ids.

libEnsemble's resource scheduler places work this way (its ``split2fit``
and ``match_slots`` options); this pool brings the same placement to any
Flux Python scheduler through flux-python's ``pool_class`` hook:

- a request that fits on one node goes to **the smallest sufficient free
  space on one node** (best fit);
- a larger slot-only request (``flux run -n N``) is **split evenly**: the
  same number of slots on every node, over the fewest nodes that allow an
  even split on this machine (8 slots where a node holds 4: 2 nodes of 4;
  6 slots: 2 nodes of 3; 7 slots: 7 nodes of 1);
- ``split2fit`` (default on): when that fewest-node split is not free now,
  try even splits over more nodes (8 slots: 4 nodes of 2, then 8 of 1)
  instead of waiting;
- ``match_slots`` (default on): when a share spans nodes, the cores and
  GPUs chosen carry **the same ids on every node**, so one
  ``CUDA_VISIBLE_DEVICES`` value is right on all of them.

A count no even split allows on this machine (17 slots on 16 nodes of 4)
is split as evenly as it can be, shares one slot apart (4+4+3+3+3, the
smaller shares holding the lowest ids of the larger): R holds exactly what
the request asks for, never more.  Node-level requests (``-N``) already
fix the share per node: they get best fit and, with ``match_slots``,
matching ids.  Exclusive requests get whole nodes (best fit among them) as
with flux-python's ``Rv1Pool``.  RFC 14 ranges get the most slots (or
nodes) the range allows that can be placed by these rules now.  A request
these rules can never place, even on the idle instance, raises
:class:`~flux.resource.InfeasibleRequest` (the job is denied at
submission); one that will fit, just not now,
:class:`~flux.resource.InsufficientResources` (the job waits).

Select it with ``pool-class=flux_sched_base.split_pool`` (any scheduler
built on :class:`flux.scheduler.Scheduler`), or ``pool_class = SplitPool``
in a scheduler class.  The options are pool keyword arguments
(``pool_kwargs = {"split2fit": False}``); flux-python has no module
argument for them, so each combination also has a class of its own, for
the command line: :class:`SplitPool` (both on), :class:`SplitPoolAnySlots`
(``match_slots`` off), :class:`SplitPoolMinNodes` (``split2fit`` off),
:class:`SplitPoolMinNodesAnySlots` (both off).  ``docs/split-pool.rst``
explains the semantics with examples.
"""

from __future__ import annotations

import json

from flux.resource import InfeasibleRequest, InsufficientResources
from flux.resource.Rv1Pool import Rv1Pool

from flux_sched_base.even_split import (
    Layout,
    NodeView,
    Rooms,
    layouts,
    lowest_shares,
    matching,
    near_layouts,
    shorten,
)
from flux_sched_base.pool import Rv1SummaryPool, VersionedPool

#: The pool's keyword arguments and their defaults (libEnsemble's).
OPTIONS = {"split2fit": True, "match_slots": True}


def _flag(name: str, value) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise ValueError(f"pool option {name}={value!r}: expected True or False")


class Rv1SplitPool(Rv1SummaryPool):
    """flux-python's ``Rv1Pool`` with even-split, matching-id placement.

    Everything but the choice of resources is ``Rv1Pool``'s: R parsing,
    up/down, allocation bookkeeping, partial frees, copies.  The choice is
    made in :meth:`_select_resources` (the extension point ``Rv1Pool``
    offers), feasibility in :meth:`_check_feasibility`.

    Args:
        R: the R to manage (JSON string or dict), as for ``Rv1Pool``.
        log: the scheduler's logger.
        split2fit: try even splits over more nodes when the fewest-node
            split is not free now.
        match_slots: give a share the same core and GPU ids on every node.
    """

    name = "SplitPool"

    #: Read by flux-python's scheduler, which warns about any other key of
    #: ``pool_kwargs``.
    known_options = frozenset(OPTIONS)

    def __init__(self, R, log=None, split2fit=True, match_slots=True, **kwargs):
        super().__init__(R, log=log, **kwargs)
        self.split2fit = _flag("split2fit", split2fit)
        self.match_slots = _flag("match_slots", match_slots)
        self._structure: dict = {}

    def _init_from_state(self, source: Rv1Pool) -> None:
        # Copies and allocations keep the options; what is cached about the
        # topology is rebuilt (an allocation holds other ranks).
        self.split2fit = getattr(source, "split2fit", True)
        self.match_slots = getattr(source, "match_slots", True)
        self._structure = {}

    def copy(self) -> Rv1SplitPool:
        """A full independent copy; it shares what is cached of the
        topology, which a copy cannot change (:meth:`remove_ranks` starts
        a new cache)."""
        new = super().copy()
        new._structure = self._structure
        return new

    def remove_ranks(self, ranks) -> None:
        """Remove ranks (shrink); forgets what was cached of the topology."""
        super().remove_ranks(ranks)
        self._structure = {}

    # -- choosing resources ------------------------------------------------------------

    def _sort_candidates(self, candidates: list) -> list:
        # Every placement below orders nodes itself (best fit).
        return candidates

    def _select_resources(self, candidates: list, request) -> tuple:
        """Choose resources for *request* among *candidates* (up, matching
        the constraint, with room for one slot, or idle for an exclusive
        request); see the module doc for the rules.

        Returns ``(selected, nslots)`` as ``Rv1Pool`` does; raises
        :class:`~flux.resource.InsufficientResources` if nothing fits now
        (after :meth:`_check_feasibility`, which raises
        :class:`~flux.resource.InfeasibleRequest` if nothing ever will).
        """
        if request.slot_size < 1 or request.nslots < 1:
            self._check_feasibility(request)  # raises: no slot, or no core
        if request.exclusive:
            found = self._whole_nodes(candidates, request)
        else:
            rooms = Rooms(
                [(rank, cores, gpus) for rank, _, cores, gpus in candidates],
                request.slot_size,
                request.gpu_per_slot,
            )
            if request.nnodes > 0:
                found = self._per_node(rooms, request)
            else:
                found = self._split(rooms, request)
        if found is None:
            self._check_feasibility(request)
            raise InsufficientResources("insufficient resources")
        return found

    def _whole_nodes(self, candidates: list, request):
        """Exclusive: idle nodes, the smallest first, up to the most the
        node count allows."""
        ordered = sorted(
            candidates, key=lambda c: (len(c[1]["cores"]), len(c[1]["gpus"]), c[0])
        )
        limit = request.nnodes_max
        if limit is not None:
            ordered = ordered[:limit]
        if len(ordered) < max(request.nnodes, 1):
            return None
        selected = [(rank, frozenset(c), frozenset(g)) for rank, _, c, g in ordered]
        per_node = request.nslots // max(request.nnodes, 1)
        return selected, per_node * len(selected)

    def _per_node(self, rooms: Rooms, request):
        """Node-level request: its per-node share on *nnodes* nodes (more,
        up to the maximum of a node range)."""
        per_node = request.nslots // request.nnodes
        shares = self._place(
            rooms, request.nnodes, request.nnodes_max, per_node, request
        )
        if shares is None:
            return None
        return shares, per_node * len(shares)

    def _split(self, rooms: Rooms, request):
        """Slot-only request: the most slots a range allows first; for each
        count, its splits (:meth:`_splits`) fewest nodes first, only the
        first with ``split2fit`` off."""
        top = rooms.total()
        if request.nslots_max is not None:
            top = min(top, request.nslots_max)
        for total in range(top, request.nslots - 1, -1):
            splits = self._splits(total, request)
            if not self.split2fit:
                splits = splits[:1]
            for nodes, per_node, short in splits:
                shares = self._place(rooms, nodes, nodes, per_node, request, short)
                if shares is not None:
                    return shares, total
        return None

    def _place(
        self,
        rooms: Rooms,
        least: int,
        most: int | None,
        per_node: int,
        request,
        short: int = 0,
    ):
        """*per_node* slots on each of *least* to *most* nodes (the last
        *short* of them one slot fewer): the tightest nodes, with matching
        ids if the share spans nodes; None if they are not there."""
        if rooms.at_least(per_node) < least:
            return None
        size, gpus = request.slot_size, request.gpu_per_slot
        ncores, ngpus = per_node * size, per_node * gpus
        if self.match_slots and most != 1:
            fit = rooms.fitting(per_node)
            shares = matching(fit, least, most, ncores, ngpus, size, gpus)
        else:
            shares = lowest_shares(rooms.tightest(per_node, most), ncores, ngpus)
        if shares is None:
            return None
        return shorten(shares, short, ncores - size, ngpus - gpus)

    # -- what can ever fit ---------------------------------------------------------------

    def _shape_key(self, request) -> tuple:
        constraint = request.constraint
        if constraint is not None:
            constraint = json.dumps(constraint, sort_keys=True, default=str)
        return (request.slot_size, request.gpu_per_slot, constraint)

    def _eligible(self, request) -> list[NodeView]:
        """Every node the request's constraint allows, with all its ids
        (up or down, as ``Rv1Pool`` judges feasibility)."""
        key = ("eligible", self._shape_key(request)[2])
        found = self._structure.get(key)
        if found is None:
            constraint = request.constraint
            if isinstance(constraint, str):
                constraint = json.loads(constraint)
            found = [
                (rank, info["cores"], info["gpus"])
                for rank, info in self._ranks.items()
                if constraint is None
                or self._matches_constraint(rank, info, constraint)
            ]
            self._structure[key] = found
        return found

    def _idle_rooms(self, request) -> Rooms:
        """:class:`Rooms` of the eligible nodes, all idle."""
        key = ("rooms", self._shape_key(request))
        found = self._structure.get(key)
        if found is None:
            found = Rooms(
                self._eligible(request), request.slot_size, request.gpu_per_slot
            )
            self._structure[key] = found
        return found

    def _capacities(self, request) -> list[int]:
        """Slots of *request*'s size each eligible node could hold, largest
        first (nodes that hold none left out)."""
        key = ("capacities", self._shape_key(request))
        found = self._structure.get(key)
        if found is None:
            idle = self._idle_rooms(request)
            found = [room for room in reversed(idle.rooms) for _ in idle.by_room[room]]
            self._structure[key] = found
        return found

    def _uniform(self) -> bool:
        """Does every node number its cores and GPUs from 0 up, as Flux's
        R from hwloc does?  Then the lowest ids of idle nodes always match,
        and any idle nodes with enough resources host a share."""
        found = self._structure.get("uniform")
        if found is None:
            found = all(
                info["cores"] == frozenset(range(len(info["cores"])))
                and info["gpus"] == frozenset(range(len(info["gpus"])))
                for info in self._ranks.values()
            )
            self._structure["uniform"] = found
        return found

    @property
    def interchangeable_units(self) -> frozenset[str]:
        """The units of which any free ones host a request, as a planner
        counting them assumes (see ``Planner.whole_nodes``): whole
        ``"nodes"``, unless ``match_slots`` is on and nodes number their
        ids differently (R of a nested instance, say).  ``"cores"`` only on
        a machine of one node: elsewhere where free cores are does matter
        (even splits, best fit), but with one node every rule has that
        node alone to choose, and any free cores on it do."""
        if len(self._ranks) == 1:
            return frozenset({"nodes", "cores"})
        if not self.match_slots or self._uniform():
            return frozenset({"nodes"})
        return frozenset()

    def _splits(self, total: int, request) -> list[Layout]:
        """How *total* slots may be split, fewest nodes first: the even
        splits this machine allows when idle (with matching ids, under
        ``match_slots``) or, if it allows none, the splits as even as can
        be (shares one slot apart)."""
        key = ("splits", total, self._shape_key(request))
        found = self._structure.get(key)
        if found is None:
            capacities = self._capacities(request)
            for candidates in (layouts, near_layouts):
                found = list(candidates(total, capacities))
                if self.match_slots and not self._uniform():
                    idle = self._idle_rooms(request)
                    found = [
                        (nodes, per_node, short)
                        for nodes, per_node, short in found
                        if self._place(idle, nodes, nodes, per_node, request)
                    ]
                if found:
                    break
            self._structure[key] = found
        return found

    def _check_feasibility(self, request) -> None:
        """``Rv1Pool``'s checks, then: is there an even split (and, with
        ``match_slots``, nodes whose ids match) on this machine, idle?

        Raises :class:`~flux.resource.InfeasibleRequest` naming why not.
        """
        if request.slot_size < 1 or request.nslots < 1:
            raise InfeasibleRequest(
                "unsatisfiable request: a job needs at least one slot, "
                "and a slot at least one core"
            )
        super()._check_feasibility(request)
        if request.exclusive:
            return
        key = (
            "feasible",
            repr(request.node_count),
            repr(request.slot_count),
            self._shape_key(request),
        )
        if key not in self._structure:
            self._structure[key] = self._infeasibility(request)
        problem = self._structure[key]
        if problem is not None:
            raise InfeasibleRequest(problem)

    def _infeasibility(self, request) -> str | None:
        size, gpus = request.slot_size, request.gpu_per_slot
        if request.nnodes > 0:
            per_node = request.nslots // request.nnodes
            idle = self._idle_rooms(request)
            if self._place(idle, request.nnodes, request.nnodes, per_node, request):
                return None
            return (
                f"unsatisfiable request: no {request.nnodes} nodes offer the same "
                f"{per_node * size} core ids"
                + (f" and {per_node * gpus} GPU ids" if gpus else "")
            )
        capacities = self._capacities(request)
        top = sum(capacities)
        if request.nslots_max is not None:
            top = min(top, request.nslots_max)
        for total in range(request.nslots, top + 1):
            if self._splits(total, request):
                return None
        most = capacities[0] if capacities else 0
        return (
            f"unsatisfiable request: {request.nslots} slots cannot be split "
            f"evenly (shares at most one slot apart) over at most "
            f"{len(capacities)} nodes of up to {most} such slots"
            + (" with the same ids on every node" if self.match_slots else "")
        )


class SplitPool(VersionedPool):
    """The pool to name in ``pool_class`` or ``pool-class=``: dispatches R
    by version to :class:`Rv1SplitPool`.

    Keyword arguments ``split2fit`` and ``match_slots`` (flux-python's
    ``pool_kwargs``) override the class's :attr:`defaults`.
    """

    impl_classes = {1: Rv1SplitPool}

    #: Option values of this class, unless ``pool_kwargs`` say otherwise.
    defaults: dict = {}

    @property
    def interchangeable_units(self) -> frozenset[str]:
        """See :attr:`Rv1SplitPool.interchangeable_units`."""
        return self.impl.interchangeable_units


class SplitPoolAnySlots(SplitPool):
    """Even splits without matching ids (``match_slots`` off)."""

    defaults = {"match_slots": False}


class SplitPoolMinNodes(SplitPool):
    """Only the fewest-node even split (``split2fit`` off): a job waits for
    it rather than spread over more nodes."""

    defaults = {"split2fit": False}


class SplitPoolMinNodesAnySlots(SplitPool):
    """Both options off: the fewest-node even split, any ids."""

    defaults = {"split2fit": False, "match_slots": False}


#: What ``pool-class=flux_sched_base.split_pool`` loads.
pool_class = SplitPool

__all__ = [
    "OPTIONS",
    "Rv1SplitPool",
    "SplitPool",
    "SplitPoolAnySlots",
    "SplitPoolMinNodes",
    "SplitPoolMinNodesAnySlots",
    "pool_class",
]
