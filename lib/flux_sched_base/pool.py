"""The default resource pool of the reference schedulers.

flux-python's ``Rv1Pool`` formats a resource summary (``dumps()``, e.g.
``rank[0-1]/core[0-3]``) three times for every job: for the debug log
lines of ``alloc`` and ``free``, which are formatted even when the log
level drops them, and for the ``resource_summary`` annotation.  Each
builds ``IDset`` objects through the C bindings for every group of ranks
and every core list, which makes the summary about a sixth of a
scheduler's CPU time in a real broker.  :class:`Rv1SummaryPool` is
``Rv1Pool`` with the same summary computed from the pool's own sets in
plain Python (equal string, tested against flux-python's); everything
else is ``Rv1Pool``'s.  :class:`Pool` is the facade flux-python's
``pool_class`` hook takes; :class:`~flux_sched_base.scheduler.
PlanningScheduler` names it, and ``pool-class=`` still selects another.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

from flux.resource import ResourcePool
from flux.resource.ResourcePoolImplementation import ResourcePoolImplementation
from flux.resource.Rv1Pool import Rv1Pool


def display_idset(ids: Iterable[int]) -> str:
    """An idset as resource summaries show it: ``3``, ``[0-2]``,
    ``[0-1,3-5,9]`` (brackets for more than one id; empty: ``""``)."""
    ordered = sorted(set(ids))
    if len(ordered) < 2:
        return "".join(map(str, ordered))
    runs = []
    first = last = ordered[0]
    for i in ordered[1:]:
        if i != last + 1:
            runs.append(f"{first}-{last}" if last > first else str(first))
            first = i
        last = i
    runs.append(f"{first}-{last}" if last > first else str(first))
    return "[" + ",".join(runs) + "]"


def summary(ranks: Mapping[int, Mapping]) -> str:
    """The resource summary of an Rv1 rank table (``rank -> {"cores":
    set, "gpus": set, ...}``): ranks with the same cores and GPUs share a
    part, parts in order of their lowest rank, joined by spaces."""
    groups: dict[tuple, list[int]] = {}
    for rank, info in ranks.items():
        key = (frozenset(info["cores"]), frozenset(info["gpus"]))
        groups.setdefault(key, []).append(rank)
    parts = []
    for (cores, gpus), members in sorted(groups.items(), key=lambda g: min(g[1])):
        part = f"rank{display_idset(members)}/core{display_idset(cores)}"
        if gpus:
            part += ",gpu" + display_idset(gpus)
        parts.append(part)
    return " ".join(parts)


class Rv1SummaryPool(Rv1Pool):
    """flux-python's ``Rv1Pool`` with :meth:`dumps` in plain Python."""

    def dumps(self) -> str:
        """The compact resource summary (as ``Rv1Pool.dumps``)."""
        return summary(self._ranks)


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


__all__ = ["Pool", "Rv1SummaryPool", "VersionedPool", "display_idset", "summary"]
