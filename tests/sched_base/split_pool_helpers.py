"""Helpers for the SplitPool tests: pools in a chosen state, and what an R
holds, slot by slot."""

from __future__ import annotations

from flux.idset import IDset
from flux.resource import ResourcePool

from flux_sched_base.planbook import parse_ranks
from mock_broker.jobspec import make_jobspec
from mock_broker.machine import Machine

#: GPU nodes like a site's: 16 cores and 4 GPUs each; the usual job runs
#: one task per GPU with 4 cores (a slot of 4 cores and 1 GPU), so a node
#: holds 4 slots.
MACHINE = Machine.uniform(16, 16, 4)


def R_of(shares: dict[int, tuple], hostnames: bool = True) -> dict:
    """An Rv1 for ``{rank: (core ids, gpu ids)}`` (iterables or idset
    strings)."""
    r_lite = []
    for rank, (cores, gpus) in sorted(shares.items()):
        children = {"core": _ids(cores)}
        if _ids(gpus):
            children["gpu"] = _ids(gpus)
        r_lite.append({"rank": str(rank), "children": children})
    execution = {"R_lite": r_lite, "starttime": 0.0, "expiration": 0.0}
    if hostnames:
        execution["nodelist"] = [f"node{rank}" for rank in sorted(shares)]
    return {"version": 1, "execution": execution}


def _ids(ids) -> str:
    if isinstance(ids, str):
        return ids
    return str(IDset(sorted(ids)))


def occupy(pool, jobid: int, shares: dict[int, tuple]) -> None:
    """Mark ``{rank: (cores, gpus)}`` allocated to *jobid* in *pool*."""
    pool.register_alloc(jobid, ResourcePool(R_of(shares)))


def slots(pool, nslots=None, nodes=None, cores=4, gpus=1, **kw):
    """A parsed request of *nslots* slots (one GPU and 4 cores by default)."""
    spec = make_jobspec(nodes=nodes, slots=nslots, cores=cores, gpus=gpus, **kw)
    return pool.parse_resource_request(spec)


def shares(R) -> dict[int, tuple[frozenset, frozenset]]:
    """``{rank: (cores, gpus)}`` of an allocation."""
    return parse_ranks(R)


def slot_counts(R, cores=4, gpus=1) -> dict[int, int]:
    """Slots on each rank of *R*, checking each share is whole slots."""
    out = {}
    for rank, (c, g) in shares(R).items():
        n = len(c) // cores
        assert len(c) == n * cores and len(g) == n * gpus, (rank, c, g)
        out[rank] = n
    return out
