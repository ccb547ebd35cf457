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
flux-python's; everything else is ``Rv1Pool``'s.  :class:`Pool` is the
facade flux-python's ``pool_class`` hook takes; :class:`~flux_sched_base.
scheduler.PlanningScheduler` names it, and ``pool-class=`` still selects
another.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

from flux.hostlist import Hostlist
from flux.resource import ResourcePool
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


class Rv1SummaryPool(Rv1Pool):
    """flux-python's ``Rv1Pool`` with :meth:`dumps` and R's idsets
    formatted in plain Python."""

    def dumps(self) -> str:
        """The compact resource summary (as ``Rv1Pool.dumps``)."""
        return summary(self._ranks)

    def _build_dict(self) -> dict:
        # R as Rv1Pool writes it (to_dict, encode); only the node list
        # still goes through flux-python's Hostlist, whose compression
        # rules are the C library's.
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
            execution["nodelist"] = [str(Hostlist(",".join(hosts)))]
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
    "Rv1SummaryPool",
    "VersionedPool",
    "display_idset",
    "idset_text",
    "summary",
]
