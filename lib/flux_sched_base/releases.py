"""When the running jobs of a plan give back cores and whole nodes.

A pass that plans with counts (:mod:`flux_sched_base.counts`) starts from
the free units over time that the running jobs leave.  Building that from
every running job on every pass costs a walk of all their ranks, repeated
for each event although one event changes one job.  :class:`Releases`
keeps the totals up to date instead, as jobs start and end:

- cores: how many cores of up ranks the running jobs release at each
  planned end;
- whole nodes: for each up rank, the latest planned end of the running
  jobs on it (the rank is whole again only then), counted per end time.

:meth:`Releases.core_profile` and :meth:`Releases.node_profile` then build
a :class:`~flux_sched_base.counts.NodeProfile` from those totals alone,
equal to :meth:`~flux_sched_base.counts.NodeProfile.from_cores` and
:meth:`~flux_sched_base.counts.NodeProfile.from_plan` over the same jobs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from flux_sched_base.counts import NodeProfile

INF = math.inf


def _count(table: dict[float, int], key: float, delta: int) -> None:
    value = table.get(key, 0) + delta
    if value:
        table[key] = value
    else:
        del table[key]


class Releases:
    """Cores and whole nodes the running jobs release, per planned end.

    Running items (:class:`~flux_sched_base.planbook.Item`: ``jobid``,
    ``end``, ``ranks``) are added and removed as they change; the up ranks
    and their core counts are set with :meth:`reset`, which counts the
    running items again (ranks going up or down change what counts).
    """

    def __init__(self) -> None:
        self._up: set[int] = set()
        self._up_cores = 0
        # end -> cores of up ranks released then; jobid -> (end, cores) added
        self._cores_at: dict[float, int] = {}
        self._busy_cores = 0
        self._added: dict[int, tuple[float, int]] = {}
        # rank -> planned ends of the running items on it (any rank)
        self._rank_ends: dict[int, list[float]] = {}
        # end -> up ranks whose last running item ends then
        self._nodes_at: dict[float, int] = {}
        self._busy_nodes = 0
        # The last profile of each kind built, by (change count, now): a
        # pass after an arrival asks again with nothing changed.
        self._changes = 0
        self._built: dict[str, tuple[int, float, NodeProfile]] = {}

    def reset(self, up: Iterable[int], node_cores: dict, running: Iterable) -> None:
        """Take *up* ranks (with *node_cores*) and count *running* again."""
        self._up = set(up)
        self._up_cores = sum(node_cores.get(rank, 0) for rank in self._up)
        self._cores_at, self._busy_cores, self._added = {}, 0, {}
        self._rank_ends, self._nodes_at, self._busy_nodes = {}, {}, 0
        self._changes += 1
        for item in running:
            self.add(item)

    def add(self, item) -> None:
        """A running item now holds its ranks until ``item.end``."""
        self._changes += 1
        up, end = self._up, item.end
        cores = 0
        rank_ends, nodes_at = self._rank_ends, self._nodes_at
        for rank, (rank_cores, _) in item.ranks.items():
            ends = rank_ends.get(rank)
            if rank not in up:
                if ends is None:
                    rank_ends[rank] = [end]
                else:
                    ends.append(end)
                continue
            cores += len(rank_cores)
            if ends is None:
                rank_ends[rank] = [end]
                self._busy_nodes += 1
                nodes_at[end] = nodes_at.get(end, 0) + 1
                continue
            last = max(ends)
            ends.append(end)
            if end > last:
                _count(nodes_at, last, -1)
                nodes_at[end] = nodes_at.get(end, 0) + 1
        self._added[item.jobid] = (end, cores)
        if cores:
            self._busy_cores += cores
            self._cores_at[end] = self._cores_at.get(end, 0) + cores

    def remove(self, item) -> None:
        """A running item added before no longer holds its ranks."""
        self._changes += 1
        end, cores = self._added.pop(item.jobid)
        if cores:
            self._busy_cores -= cores
            _count(self._cores_at, end, -cores)
        up, rank_ends, nodes_at = self._up, self._rank_ends, self._nodes_at
        for rank in item.ranks:
            ends = rank_ends[rank]
            last = max(ends) if rank in up else None
            ends.remove(end)
            if not ends:
                del rank_ends[rank]
                if last is not None:
                    self._busy_nodes -= 1
                    _count(nodes_at, last, -1)
                continue
            if last is not None and end == last:
                now_last = max(ends)
                if now_last != last:
                    _count(nodes_at, last, -1)
                    nodes_at[now_last] = nodes_at.get(now_last, 0) + 1

    def free_now(self, unit: str) -> int:
        """Up units (``"cores"`` or ``"nodes"``) no running job holds now:
        the ``free_now`` of :meth:`core_profile` or :meth:`node_profile`,
        without building it."""
        if unit == "cores":
            return self._up_cores - self._busy_cores
        return len(self._up) - self._busy_nodes

    def core_profile(self, now: float) -> NodeProfile:
        """Free cores of up ranks over time from *now* (a new object)."""
        return self._profile("cores", now)

    def node_profile(self, now: float) -> NodeProfile:
        """Whole free up ranks over time from *now* (a new object)."""
        return self._profile("nodes", now)

    def _profile(self, unit: str, now: float) -> NodeProfile:
        built = self._built.get(unit)
        if built is not None and built[0] == self._changes and built[1] == now:
            return built[2].copy()
        free_now = self.free_now(unit)
        totals = self._cores_at if unit == "cores" else self._nodes_at
        profile = NodeProfile.from_totals(now, free_now, totals)
        self._built[unit] = (self._changes, now, profile.copy())
        return profile
