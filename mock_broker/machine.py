"""Describe a cluster and turn it into RFC 20 R (version 1).

A :class:`Machine` is a list of node groups.  Each group has a count, cores
and GPUs per node, and properties; ranks are numbered in group order and
hostnames are ``<prefix><rank>``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mock_broker.flux_substitute.idset import IDset


def _idset(ids) -> str:
    """Encode integers as an RFC 22 range string ("0-3,7")."""
    return str(IDset(sorted(set(ids))))


@dataclass(frozen=True)
class NodeGroup:
    """``count`` identical nodes."""

    count: int
    cores: int
    gpus: int = 0
    properties: tuple[str, ...] = ()

    def __post_init__(self):
        if self.count < 1 or self.cores < 1 or self.gpus < 0:
            raise ValueError(
                f"node group needs count>=1, cores>=1, gpus>=0: got {self}"
            )


@dataclass(frozen=True)
class Machine:
    """A cluster: node groups, a hostname prefix and the instance expiration."""

    groups: tuple[NodeGroup, ...]
    prefix: str = "node"
    expiration: float = 0.0
    extra_properties: dict = field(default_factory=dict)

    def __post_init__(self):
        # Read for every allocation the referee checks: computed once.
        groups = tuple(self.groups)
        starts, first = [], 0
        for group in groups:
            starts.append((group, first))
            first += group.count
        object.__setattr__(self, "groups", groups)
        object.__setattr__(self, "_starts", tuple(starts))
        object.__setattr__(self, "_size", first)
        object.__setattr__(
            self, "_most_cores", max((g.cores for g in groups), default=0)
        )
        object.__setattr__(self, "_most_gpus", max((g.gpus for g in groups), default=0))

    @classmethod
    def uniform(
        cls,
        nodes: int,
        cores: int,
        gpus: int = 0,
        properties: tuple[str, ...] = (),
        prefix: str = "node",
    ) -> Machine:
        """``nodes`` identical nodes."""
        return cls((NodeGroup(nodes, cores, gpus, tuple(properties)),), prefix)

    @property
    def size(self) -> int:
        """Number of nodes (broker ranks)."""
        return self._size

    @property
    def most_cores(self) -> int:
        """The most cores any node has."""
        return self._most_cores

    @property
    def most_gpus(self) -> int:
        """The most GPUs any node has."""
        return self._most_gpus

    def ranks(self) -> range:
        return range(self.size)

    def hostname(self, rank: int) -> str:
        return f"{self.prefix}{rank}"

    def group_of(self, rank: int) -> NodeGroup:
        for group, first in self._group_starts():
            if first <= rank < first + group.count:
                return group
        raise IndexError(f"rank {rank} is not in this machine (size {self.size})")

    def _group_starts(self) -> tuple[tuple[NodeGroup, int], ...]:
        """Each group with its first rank."""
        return self._starts

    def to_R(self) -> dict:
        """Return the machine as an Rv1 object."""
        r_lite = []
        properties: dict[str, list[int]] = {}
        for group, first in self._group_starts():
            ranks = range(first, first + group.count)
            children = {"core": _idset(range(group.cores))}
            if group.gpus:
                children["gpu"] = _idset(range(group.gpus))
            r_lite.append({"rank": _idset(ranks), "children": children})
            for prop in group.properties:
                properties.setdefault(prop, []).extend(ranks)
        execution = {
            "R_lite": r_lite,
            "nodelist": [f"{self.prefix}{r}" for r in self.ranks()],
            "starttime": 0.0,
            "expiration": float(self.expiration),
        }
        if properties:
            execution["properties"] = {p: _idset(r) for p, r in properties.items()}
        return {"version": 1, "execution": execution}
