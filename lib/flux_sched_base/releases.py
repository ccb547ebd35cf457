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

A pass that keeps its profile from one event to the next asks instead
what changed since it last looked (:meth:`Releases.mark` and
:meth:`Releases.changes`): each change of a total is a change of the free
units from now until that end.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from flux_sched_base.counts import NodeProfile

INF = math.inf

#: Changes recorded after a mark before the record is given up (a pass
#: then builds its profile afresh): bounds the memory of an instance whose
#: queue stays empty while jobs come and go.
LOG_LIMIT = 100_000


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
        # Changes of the totals since mark(): (unit, end, delta); None when
        # nobody asked, or after a reset (the totals were counted anew).
        self._log: list[tuple[str, float, int]] | None = None

    def reset(self, up: Iterable[int], node_cores: dict, running: Iterable) -> None:
        """Take *up* ranks (with *node_cores*) and count *running* again."""
        self._up = set(up)
        self._up_cores = sum(node_cores.get(rank, 0) for rank in self._up)
        self._cores_at, self._busy_cores, self._added = {}, 0, {}
        self._rank_ends, self._nodes_at, self._busy_nodes = {}, {}, 0
        self._changes += 1
        self._log = None
        for item in running:
            self.add(item)

    def _shift(self, unit: str, end: float, delta: int) -> None:
        """Change the total released at *end* of *unit* by *delta*."""
        _count(self._cores_at if unit == "cores" else self._nodes_at, end, delta)
        log = self._log
        if log is not None:
            log.append((unit, end, delta))
            if len(log) > LOG_LIMIT:
                self._log = None  # nobody has asked for a long time

    def add(self, item) -> None:
        """A running item now holds its ranks until ``item.end``."""
        self._changes += 1
        up, end = self._up, item.end
        cores = 0
        rank_ends, shift = self._rank_ends, self._shift
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
                shift("nodes", end, 1)
                continue
            last = max(ends)
            ends.append(end)
            if end > last:
                shift("nodes", last, -1)
                shift("nodes", end, 1)
        self._added[item.jobid] = (end, cores)
        if cores:
            self._busy_cores += cores
            shift("cores", end, cores)

    def remove(self, item) -> None:
        """A running item added before no longer holds its ranks."""
        self._changes += 1
        end, cores = self._added.pop(item.jobid)
        shift = self._shift
        if cores:
            self._busy_cores -= cores
            shift("cores", end, -cores)
        up, rank_ends = self._up, self._rank_ends
        for rank in item.ranks:
            ends = rank_ends[rank]
            last = max(ends) if rank in up else None
            ends.remove(end)
            if not ends:
                del rank_ends[rank]
                if last is not None:
                    self._busy_nodes -= 1
                    shift("nodes", last, -1)
                continue
            if last is not None and end == last:
                now_last = max(ends)
                if now_last != last:
                    shift("nodes", last, -1)
                    shift("nodes", now_last, 1)

    def mark(self) -> None:
        """Start recording the changes :meth:`changes` returns."""
        self._log = []

    def position(self) -> int | None:
        """How many changes were recorded since :meth:`mark` (None if the
        record was lost): a point to ask :meth:`changes` from."""
        return None if self._log is None else len(self._log)

    def changes(self, unit: str, since: int = 0) -> dict[float, int] | None:
        """How the totals of *unit* changed since :meth:`mark` (or since
        :meth:`position` said *since*), as ``{end: delta}`` (a running job
        added ends at *end* with *delta* units; one that left, negative);
        None if they were counted anew since (a :meth:`reset`) or nothing
        was marked.  Each ``(end, delta)`` is *delta* units fewer free from
        now until *end*."""
        if self._log is None:
            return None
        totals: dict[float, int] = {}
        for kind, end, delta in self._log[since:]:
            if kind == unit:
                totals[end] = totals.get(end, 0) + delta
        return {end: delta for end, delta in totals.items() if delta}

    def ends(self, unit: str) -> int:
        """Number of distinct planned ends of *unit*'s totals (the size of
        a profile built afresh, less the reservations)."""
        return len(self._cores_at if unit == "cores" else self._nodes_at)

    def all_endless(self, unit: str) -> bool:
        """Does every running job hold its *unit* units with no planned end
        (none has a time limit, and the instance has no expiration)?  Then
        the units free now stay free and no more ever come free."""
        totals = self._cores_at if unit == "cores" else self._nodes_at
        return all(end == INF for end in totals)

    @property
    def version(self) -> int:
        """A number that changes whenever the running items or the up
        ranks do (what every profile built from here depends on)."""
        return self._changes

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
