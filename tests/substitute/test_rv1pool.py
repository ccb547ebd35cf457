"""The wheel's real resource pool, run under the native-layer substitute.

``flux.resource`` (``ResourcePool``, ``Rv1Pool``, ``Rv1Set``,
``ResourceCount``) comes from flux-python 0.88.0's own files; only
``flux.idset``, ``flux.hostlist`` and ``flux.job.JobID`` underneath it are
ours.  These tests drive the pool the way ``flux.scheduler.Scheduler`` does,
on a realistic machine, and check concrete outcomes: which ranks, cores
and GPUs a job gets, what stays allocated, and which errors are raised.
The tests that take the ``pool`` fixture run on the reference schedulers'
:class:`~flux_sched_base.pool.Pool` too, which must behave alike.

Machine: 16 nodes ``node0``..``node15``, 4 cores and 2 GPUs each; ranks
0-11 carry ``pbatch``, 12-15 ``pdebug`` and 0-7 ``gpu-a100``.
"""

from __future__ import annotations

import importlib
import json
import syslog

import flux.resource
import pytest
from flux.idset import IDset
from flux.resource import (
    InfeasibleRequest,
    InsufficientResources,
    ResourcePool,
    ResourceSet,
    Rv1Pool,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from flux_sched_base.pool import Pool
from mock_broker.machine import Machine, NodeGroup

# ``flux.resource.Rv1Pool`` is the class; the pool reads ``time.time()``
# for job end times through the module of the same name.
RV1POOL_MODULE = importlib.import_module("flux.resource.Rv1Pool")

MACHINE = Machine(
    groups=(
        NodeGroup(8, cores=4, gpus=2, properties=("pbatch", "gpu-a100")),
        NodeGroup(4, cores=4, gpus=2, properties=("pbatch",)),
        NodeGroup(4, cores=4, gpus=2, properties=("pdebug",)),
    )
)
WHOLE_NODE = "core[0-3],gpu[0-1]"


def machine_R() -> dict:
    return MACHINE.to_R()


def jobspec(
    *,
    nodes=None,
    slots=1,
    cores=1,
    gpus=0,
    duration=0.0,
    constraints=None,
    exclusive=False,
) -> dict:
    """An RFC 14 version 1 jobspec: node->slot->core[/gpu], or slot-only."""
    children = [{"type": "core", "count": cores}]
    if gpus:
        children.append({"type": "gpu", "count": gpus})
    slot = {"type": "slot", "count": slots, "label": "task", "with": children}
    if nodes is not None:
        node = {"type": "node", "count": nodes, "with": [slot]}
        if exclusive:
            node["exclusive"] = True
        resources = [node]
    else:
        if exclusive:
            slot["exclusive"] = True
        resources = [slot]
    system = {"duration": duration}
    if constraints is not None:
        system["constraints"] = constraints
    return {
        "version": 1,
        "resources": resources,
        "tasks": [{"command": ["app"], "slot": "task", "count": {"per_slot": 1}}],
        "attributes": {"system": system},
    }


def rng(lo, hi):
    """An RFC 14 range count."""
    return {"min": lo, "max": hi, "operator": "+", "operand": 1}


@pytest.fixture(params=[ResourcePool, Pool], ids=["flux-python", "schedkit"])
def pool(request):
    """A pool brought up as Scheduler._acquire_resources() does it: flux-
    python's, and the reference schedulers' (which must behave alike)."""
    p = request.param(machine_R())
    p.mark_down("all")
    p.mark_up("0-15")
    return p


def alloc(pool, jobid, **spec):
    return pool.alloc(jobid, pool.parse_resource_request(jobspec(**spec)))


def allocated(pool) -> str:
    """The pool's allocated resources in Rv1 dumps form ("" when none)."""
    return pool.copy_allocated().dumps()


def subset(R, ranks: str) -> ResourcePool:
    """Part of an allocation, as the job manager would send it to sched.free."""
    return ResourcePool(json.loads(ResourceSet(R.to_dict()).copy_ranks(ranks).encode()))


# --- construction --------------------------------------------------------------


def test_pool_reads_topology_hostnames_and_properties():
    p = ResourcePool(machine_R())
    assert isinstance(p.impl, Rv1Pool)
    rs = p.to_resource_set()
    assert (rs.nnodes, rs.ncores, rs.ngpus) == (16, 64, 32)
    assert str(rs.ranks) == "0-15"
    assert str(rs.nodelist) == "node[0-15]"
    assert list(rs.nodelist)[10] == "node10"
    assert json.loads(rs.get_properties()) == {
        "pbatch": "0-11",
        "gpu-a100": "0-7",
        "pdebug": "12-15",
    }
    assert p.dumps() == "rank[0-15]/" + WHOLE_NODE
    assert p.expiration == 0.0


def test_compressed_nodelist_maps_hostnames_to_ranks():
    # The broker usually sends nodelist as one RFC 29 hostlist string.
    R = machine_R()
    R["execution"]["nodelist"] = ["node[0-15]"]
    p = ResourcePool(R)
    p.mark_down("all")
    p.mark_up("all")
    got = alloc(p, 1, nodes=2, exclusive=True, constraints={"hostlist": ["node[9,14]"]})
    assert str(got.to_resource_set().ranks) == "9,14"
    assert str(got.to_resource_set().nodelist) == "node[9,14]"


def test_new_pool_is_up_until_scheduler_marks_all_down():
    p = ResourcePool(machine_R())
    assert p.copy_down().nnodes == 0
    p.mark_down("all")
    assert str(p.copy_down().ranks) == "0-15"
    with pytest.raises(InsufficientResources, match="insufficient resources"):
        alloc(p, 1)
    p.mark_up("0-15")
    assert p.copy_down().nnodes == 0
    assert alloc(p, 1).dumps() == "rank0/core0"


def test_pool_rejects_bad_R():
    with pytest.raises(TypeError, match="cannot be instantiated from"):
        ResourcePool(42)
    with pytest.raises(ValueError, match="R version 2 not supported by ResourcePool"):
        ResourcePool({"version": 2, "execution": {}})
    with pytest.raises(json.JSONDecodeError):
        ResourcePool("{not json")
    bad = machine_R()
    bad["execution"]["R_lite"][0]["rank"] = "0-x"
    with pytest.raises(ValueError, match="0-x"):
        ResourcePool(bad)


# --- parse_resource_request ---------------------------------------------------


def test_parse_node_slot_core_gpu_request(pool):
    rr = pool.parse_resource_request(
        jobspec(
            nodes=2,
            slots=2,
            cores=2,
            gpus=1,
            duration=3600,
            constraints={"properties": ["pdebug"]},
        )
    )
    assert (rr.nnodes, rr.nnodes_max) == (2, 2)
    assert (rr.nslots, rr.nslots_max) == (4, 4)
    assert (rr.slot_size, rr.gpu_per_slot) == (2, 1)
    assert (rr.ncores, rr.ngpus) == (8, 4)
    assert rr.duration == 3600.0
    assert rr.constraint == {"properties": ["pdebug"]}
    assert rr.exclusive is False


def test_parse_ranges_and_slot_only_layouts(pool):
    rr = pool.parse_resource_request(jobspec(nodes=rng(2, 4), exclusive=True))
    assert (rr.nnodes, rr.nnodes_max, rr.nslots, rr.nslots_max) == (2, 4, 2, 4)
    assert rr.exclusive is True

    rr = pool.parse_resource_request(jobspec(slots=rng(3, 10), cores=2))
    assert rr.node_count is None
    assert (rr.nnodes, rr.nslots, rr.nslots_max, rr.ncores) == (0, 3, 10, 6)

    # slot-only exclusive: each slot becomes one whole node
    rr = pool.parse_resource_request(jobspec(slots=3, exclusive=True))
    assert (rr.nnodes, rr.nnodes_max, rr.nslots) == (3, 3, 3)


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda js: js.update(resources=[]), "jobspec has no resources"),
        (
            lambda js: js["attributes"]["system"].pop("duration"),
            "getting duration: Object item not found: duration",
        ),
        (
            lambda js: js["attributes"].pop("system"),
            "getting duration: Object item not found: system",
        ),
        (
            lambda js: js["resources"][0]["with"][0].update({"with": []}),
            "Unable to determine slot size",
        ),
        (
            lambda js: js.update(resources=js["resources"][0]["with"][0]["with"]),
            "Unable to determine slot count",
        ),
        (
            lambda js: js["resources"][0].update(count=0),
            "integer count must be >= 1, got 0",
        ),
        (
            lambda js: js["resources"][0].update(count={"min": 4, "max": 2}),
            "max must be >= min, got max=2 min=4",
        ),
        (
            lambda js: js["resources"][0].update(
                count={"min": 1, "max": 4, "operator": "%", "operand": 2}
            ),
            "operator '%' is not supported",
        ),
    ],
    ids=[
        "no-resources",
        "no-duration",
        "no-system",
        "no-core",
        "no-slot",
        "zero-count",
        "max-below-min",
        "bad-operator",
    ],
)
def test_malformed_jobspec_raises_value_error_naming_the_problem(pool, mutate, message):
    js = jobspec(nodes=2, slots=1, cores=1)
    mutate(js)
    with pytest.raises(ValueError) as exc:
        pool.parse_resource_request(js)
    assert message in str(exc.value)


# --- alloc --------------------------------------------------------------------


def test_core_allocs_spread_worst_fit_and_take_lowest_ids(pool):
    assert alloc(pool, 1, nodes=1).dumps() == "rank0/core0"
    # rank 0 now has fewer free cores: worst-fit moves on to rank 1
    assert alloc(pool, 2, nodes=1).dumps() == "rank1/core0"
    got = alloc(pool, 3, nodes=1, slots=2, cores=2)
    assert got.dumps() == "rank2/core[0-3]"
    assert got.to_dict()["execution"]["nslots"] == 2
    assert allocated(pool) == "rank[0-1]/core0 rank2/core[0-3]"


def test_slot_only_cores_pack_each_node_before_the_next(pool):
    got = alloc(pool, 1, slots=6, cores=2)
    assert got.dumps() == "rank[0-2]/core[0-3]"
    execution = got.to_dict()["execution"]
    assert execution["nslots"] == 6
    assert execution["nodelist"] == ["node[0-2]"]
    assert execution["properties"] == {"gpu-a100": "0-2", "pbatch": "0-2"}


def test_gpu_allocation_and_exhaustion(pool):
    got = alloc(pool, 1, slots=3, cores=1, gpus=2)
    # 2 GPUs per node: one slot per node
    assert got.dumps() == "rank[0-2]/core0,gpu[0-1]"
    assert got.to_resource_set().ngpus == 6
    alloc(pool, 2, slots=13, cores=1, gpus=2)  # the other 26 GPUs
    assert pool.copy_allocated().ngpus == 32
    with pytest.raises(InsufficientResources, match="insufficient resources"):
        alloc(pool, 3, nodes=1, gpus=1)
    # cores are still free; a CPU-only job fits
    assert alloc(pool, 4, nodes=1, cores=3).dumps() == "rank0/core[1-3]"


def test_exclusive_nodes_take_whole_idle_nodes_only(pool):
    got = alloc(pool, 1, nodes=2, exclusive=True)
    assert got.dumps() == "rank[0-1]/" + WHOLE_NODE
    # occupy one core on every pdebug node
    for jobid in range(10, 14):
        alloc(pool, jobid, nodes=1, constraints={"properties": ["pdebug"]})
    assert allocated(pool).endswith("rank[12-15]/core0")
    # four pdebug nodes have free cores, but none is idle
    with pytest.raises(InsufficientResources):
        alloc(pool, 2, nodes=1, exclusive=True, constraints={"properties": ["pdebug"]})
    # slot-only exclusive: one idle node per slot
    got = alloc(pool, 3, slots=2, exclusive=True)
    assert got.dumps() == "rank[2-3]/" + WHOLE_NODE


def test_node_range_gets_max_when_free(pool):
    got = alloc(pool, 1, nodes=rng(2, 4), exclusive=True)
    assert got.dumps() == "rank[0-3]/" + WHOLE_NODE
    assert got.to_dict()["execution"]["nslots"] == 4
    # a max beyond the machine takes every remaining node
    got = alloc(pool, 2, nodes=rng(2, 100), exclusive=True)
    assert str(got.to_resource_set().ranks) == "4-15"


def test_node_range_gets_min_when_constrained(pool):
    pool.mark_down("12-13")
    debug = {"properties": ["pdebug"]}
    got = alloc(pool, 1, nodes=rng(2, 4), exclusive=True, constraints=debug)
    assert got.dumps() == "rank[14-15]/" + WHOLE_NODE
    pool.mark_up("12")
    with pytest.raises(InsufficientResources):
        alloc(pool, 2, nodes=rng(2, 4), exclusive=True, constraints=debug)
    assert alloc(
        pool, 3, nodes=rng(1, 4), exclusive=True, constraints=debug
    ).dumps() == ("rank12/" + WHOLE_NODE)


def test_stepped_node_count_is_infeasible(pool):
    rr = pool.parse_resource_request(
        jobspec(nodes={"min": 2, "max": 8, "operator": "*", "operand": 2})
    )
    assert list(rr.node_count.valid_counts(16)) == [8, 4, 2]
    with pytest.raises(InfeasibleRequest, match="discrete valid values"):
        pool.check_feasibility(rr)
    with pytest.raises(InfeasibleRequest, match="discrete valid values"):
        pool.alloc(1, rr)


@pytest.mark.parametrize(
    ("constraint", "ranks"),
    [
        ({"properties": ["pdebug"]}, "12-15"),
        ({"properties": ["gpu-a100"]}, "0-7"),
        ({"properties": ["pbatch", "^gpu-a100"]}, "8-11"),
        ({"hostlist": ["node[3-5]", "node15"]}, "3-5,15"),
        ({"ranks": ["0-1", "12"]}, "0-1,12"),
        ({"not": [{"properties": ["pbatch"]}]}, "12-15"),
        ({"or": [{"properties": ["pdebug"]}, {"ranks": ["0"]}]}, "0,12-15"),
        ({"and": [{"properties": ["pbatch"]}, {"hostlist": ["node[7-9]"]}]}, "7-9"),
    ],
)
def test_constraints_select_exactly_the_matching_ranks(pool, constraint, ranks):
    got = alloc(pool, 1, nodes=rng(1, 16), exclusive=True, constraints=constraint)
    assert str(got.to_resource_set().ranks) == ranks


def test_allocated_R_keeps_only_its_ranks_properties(pool):
    got = alloc(pool, 1, nodes=1, constraints={"properties": ["pdebug"]})
    assert got.to_dict() == {
        "version": 1,
        "execution": {
            "R_lite": [{"rank": "12", "children": {"core": "0"}}],
            "starttime": 0.0,
            "expiration": 0.0,
            "nslots": 1,
            "nodelist": ["node12"],
            "properties": {"pdebug": "12"},
        },
    }


def test_unsatisfiable_constraint_is_infeasible(pool):
    with pytest.raises(
        InfeasibleRequest, match=r"need 5 node\(s\) with 1 cores each, only 4 eligible"
    ):
        alloc(pool, 1, nodes=5, constraints={"properties": ["pdebug"]})
    with pytest.raises(InfeasibleRequest, match="only 0 eligible"):
        alloc(pool, 2, nodes=1, constraints={"properties": ["no-such-queue"]})
    with pytest.raises(
        ValueError, match=r"unknown constraint operator\(s\): \['color'\]"
    ):
        alloc(pool, 3, nodes=1, constraints={"color": ["red"]})
    assert allocated(pool) == ""


def test_down_ranks_are_never_allocated(pool):
    pool.mark_down("0-7,12")
    assert str(pool.copy_down().ranks) == "0-7,12"
    got = alloc(pool, 1, nodes=rng(1, 16), exclusive=True)
    assert str(got.to_resource_set().ranks) == "8-11,13-15"
    pool.free(1, got, final=True)
    got = alloc(pool, 2, slots=rng(1, 64), cores=1)
    assert got.to_resource_set().ncores == 28
    assert got.to_dict()["execution"]["nslots"] == 28
    assert 12 not in got.to_resource_set().ranks


def test_alloc_until_insufficient_resources(pool):
    ranks = []
    for jobid in range(1, 17):
        got = alloc(pool, jobid, nodes=1, exclusive=True)
        ranks.extend(got.to_resource_set().ranks)
    assert sorted(ranks) == list(range(16))
    with pytest.raises(InsufficientResources) as exc:
        alloc(pool, 17, nodes=1, slots=1, cores=1)
    assert str(exc.value) == "insufficient resources"
    assert isinstance(exc.value, OSError)
    assert InsufficientResources is ResourcePool.InsufficientResources
    assert flux.resource.InfeasibleRequest is InfeasibleRequest
    assert pool.copy_allocated().ncores == 64


# --- free ---------------------------------------------------------------------


def test_full_free_returns_everything(pool):
    first = alloc(pool, 1, nodes=3, slots=2, cores=2, gpus=1, duration=60)
    gen = pool.generation
    pool.free(1, first, final=True)
    assert pool.generation == gen + 1
    assert allocated(pool) == ""
    assert pool.job_end_times() == []
    # the same resources are handed out again
    assert alloc(pool, 2, nodes=3, slots=2, cores=2, gpus=1).dumps() == first.dumps()
    # free without R drops the whole tracked allocation
    pool.free(2)
    assert allocated(pool) == ""


def test_partial_free_rank_by_rank(pool):
    R = alloc(pool, 42, nodes=3, exclusive=True, duration=100)
    assert R.dumps() == "rank[0-2]/" + WHOLE_NODE

    pool.free(42, subset(R, "0"))
    assert allocated(pool) == "rank[1-2]/" + WHOLE_NODE
    assert [jid for jid, _ in pool.job_end_times()] == [42]
    # the freed rank can be used at once
    again = alloc(
        pool, 43, nodes=rng(1, 3), exclusive=True, constraints={"ranks": ["0-2"]}
    )
    assert again.dumps() == "rank0/" + WHOLE_NODE
    pool.free(43, again, final=True)

    # a rank already freed is not part of the job any more
    with pytest.raises(
        ValueError, match=r"R contains ranks not in job allocation: \{0\}"
    ):
        pool.free(42, subset(R, "0-1"))
    # a final free must cover what is left
    with pytest.raises(ValueError, match="final R mismatch") as exc:
        pool.free(42, subset(R, "1"), final=True)
    assert "expected rank[1-2]/" + WHOLE_NODE in str(exc.value)

    pool.free(42, subset(R, "1"))
    assert allocated(pool) == "rank2/" + WHOLE_NODE
    pool.free(42, subset(R, "2"), final=True)
    assert allocated(pool) == ""
    assert pool.job_end_times() == []


def test_free_of_unknown_job_changes_nothing(pool):
    alloc(pool, 1, nodes=1)
    gen = pool.generation
    pool.free(999)
    pool.free(999, final=True)
    assert pool.generation == gen
    assert allocated(pool) == "rank0/core0"
    assert [jid for jid, _ in pool.job_end_times()] == [1]


def test_pool_logs_with_f58_job_ids():
    logs = []
    p = ResourcePool(machine_R(), log=lambda level, msg: logs.append((level, msg)))
    p.mark_down("all")
    p.mark_up("all")
    R = p.alloc(58, p.parse_resource_request(jobspec(nodes=1)))
    p.free(58, R, final=True)
    p.register_alloc(0, ResourcePool(R.to_dict()))
    assert logs == [
        (syslog.LOG_DEBUG, "alloc: ƒ21: rank0/core0"),
        (syslog.LOG_DEBUG, "free: ƒ21: rank0/core0 (final)"),
        (syslog.LOG_INFO, "hello: ƒ1: rank0/core0"),
    ]


# --- copies -------------------------------------------------------------------


def test_copy_is_independent(pool):
    alloc(pool, 1, nodes=2, exclusive=True)
    clone = pool.copy()
    assert clone.generation == pool.generation
    assert allocated(clone) == allocated(pool) == "rank[0-1]/" + WHOLE_NODE

    alloc(clone, 2, nodes=1, exclusive=True)
    clone.mark_down("15")
    assert allocated(pool) == "rank[0-1]/" + WHOLE_NODE
    assert pool.copy_down().nnodes == 0
    assert [jid for jid, _ in pool.job_end_times()] == [1]

    pool.free(1)
    assert allocated(clone) == "rank[0-2]/" + WHOLE_NODE
    assert sorted(jid for jid, _ in clone.job_end_times()) == [1, 2]


# --- hello (register_alloc) -----------------------------------------------------


def test_register_alloc_marks_R_allocated(pool):
    R = {
        "version": 1,
        "execution": {
            "R_lite": [{"rank": "3-4", "children": {"core": "0-3", "gpu": "0-1"}}],
            "nodelist": ["node[3-4]"],
            "starttime": 1000.0,
            "expiration": 5000.0,
        },
    }
    pool.register_alloc(7, ResourcePool(R))
    assert allocated(pool) == "rank[3-4]/" + WHOLE_NODE
    assert str(pool.copy_allocated().nodelist) == "node[3-4]"
    assert pool.job_end_times() == [(7, 5000.0)]
    got = alloc(pool, 8, nodes=rng(1, 16), exclusive=True)
    assert str(got.to_resource_set().ranks) == "0-2,5-15"
    pool.free(7, ResourcePool(R), final=True)
    assert allocated(pool) == "rank[0-2,5-15]/" + WHOLE_NODE


def test_register_alloc_rejects_ranks_outside_the_pool(pool):
    R = {
        "version": 1,
        "execution": {"R_lite": [{"rank": "15-17", "children": {"core": "0"}}]},
    }
    with pytest.raises(
        ValueError, match=r"allocation contains ranks not in resource pool: \[16, 17\]"
    ):
        pool.register_alloc(7, ResourcePool(R))
    assert allocated(pool) == ""


# --- feasibility --------------------------------------------------------------


def test_check_feasibility_ignores_current_allocations(pool):
    for jobid in range(16):
        alloc(pool, jobid, nodes=1, exclusive=True)
    rr = pool.parse_resource_request(jobspec(nodes=16, exclusive=True))
    assert pool.check_feasibility(rr) is None
    with pytest.raises(InsufficientResources):
        pool.alloc(99, rr)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"nodes": 17}, "need 17 node(s) with 1 cores each, only 16 eligible"),
        (
            {"nodes": 17, "exclusive": True},
            "need 17 exclusive node(s), only 16 eligible",
        ),
        (
            {"nodes": 1, "gpus": 3},
            "need 1 node(s) with 1 cores and 3 GPUs each, only 0 eligible",
        ),
        (
            {"nodes": 2, "slots": 3, "cores": 2},
            "need 2 node(s) with 6 cores each, only 0 eligible",
        ),
        (
            {"slots": 1, "cores": 5},
            "need 1 slot(s) of 5 core(s), only 0 such slot(s) available "
            "(total cores: 64)",
        ),
        (
            {"slots": 33, "gpus": 1},
            "need 33 slot(s) with 1 GPU(s) each, only 32 available (total GPUs: 32)",
        ),
    ],
)
def test_infeasible_requests(pool, spec, message):
    rr = pool.parse_resource_request(jobspec(**spec))
    with pytest.raises(InfeasibleRequest) as exc:
        pool.check_feasibility(rr)
    assert str(exc.value) == "unsatisfiable request: " + message
    # alloc escalates to InfeasibleRequest rather than asking for a retry
    with pytest.raises(InfeasibleRequest):
        pool.alloc(1, rr)


# --- end times ----------------------------------------------------------------


def test_job_end_times_and_update_expiration(pool, monkeypatch):
    monkeypatch.setattr(RV1POOL_MODULE.time, "time", lambda: 1000.0)
    alloc(pool, 1, nodes=1, duration=60)
    alloc(pool, 2, nodes=1)  # unlimited, no instance expiration
    pool.expiration = 5000.0
    alloc(pool, 3, nodes=1)  # unlimited: ends with the instance
    assert sorted(pool.job_end_times()) == [(1, 1060.0), (2, 0.0), (3, 5000.0)]

    gen = pool.generation
    pool.update_expiration(1, 2000.0)
    assert pool.generation == gen + 1
    pool.update_expiration(999, 1.0)  # unknown job: ignored
    assert pool.generation == gen + 1
    assert sorted(pool.job_end_times()) == [(1, 2000.0), (2, 0.0), (3, 5000.0)]

    pool.free(1)
    assert sorted(pool.job_end_times()) == [(2, 0.0), (3, 5000.0)]


# --- shrink -------------------------------------------------------------------


def test_remove_ranks_shrinks_the_pool(pool):
    pool.remove_ranks(IDset("12-15"))
    rs = pool.to_resource_set()
    assert str(rs.ranks) == "0-11"
    assert str(rs.nodelist) == "node[0-11]"
    assert json.loads(rs.get_properties()) == {"pbatch": "0-11", "gpu-a100": "0-7"}
    with pytest.raises(InfeasibleRequest, match="only 0 eligible"):
        alloc(pool, 1, nodes=1, constraints={"properties": ["pdebug"]})
    pool.remove_ranks("10-11")  # an idset string works too
    with pytest.raises(InfeasibleRequest, match="only 10 eligible"):
        alloc(pool, 2, nodes=11, exclusive=True)
    assert str(
        alloc(pool, 3, nodes=rng(1, 16), exclusive=True).to_resource_set().ranks
    ) == ("0-9")


# --- serialisation ------------------------------------------------------------


def test_to_dict_round_trip(pool):
    pool.expiration = 7200.0
    d = pool.to_dict()
    assert d == {
        "version": 1,
        "execution": {
            "R_lite": [{"rank": "0-15", "children": {"core": "0-3", "gpu": "0-1"}}],
            "starttime": 0.0,
            "expiration": 7200.0,
            "nodelist": ["node[0-15]"],
            "properties": {"gpu-a100": "0-7", "pbatch": "0-11", "pdebug": "12-15"},
        },
    }
    for again in (ResourcePool(d), ResourcePool(json.dumps(d))):
        assert again.to_dict() == d
        assert again.dumps() == pool.dumps()
        assert again.expiration == 7200.0


def test_allocation_round_trips_through_R(pool):
    alloc(pool, 1, nodes=1, slots=3, cores=1)  # rank 0 keeps one free core
    got = alloc(pool, 2, slots=5, cores=1, gpus=1)
    d = got.to_dict()
    back = ResourcePool(d)
    assert back.to_dict() == d
    assert back.dumps() == got.dumps()
    assert str(back.to_resource_set().nodelist) == str(got.to_resource_set().nodelist)


def test_heterogeneous_machine_dumps_by_group():
    m = Machine(
        groups=(
            NodeGroup(2, cores=8),
            NodeGroup(3, cores=4, gpus=2, properties=("gpu",)),
        ),
        prefix="tioga",
    )
    p = ResourcePool(m.to_R())
    assert p.dumps() == "rank[0-1]/core[0-7] rank[2-4]/core[0-3],gpu[0-1]"
    assert p.to_dict()["execution"]["R_lite"] == [
        {"rank": "0-1", "children": {"core": "0-7"}},
        {"rank": "2-4", "children": {"core": "0-3", "gpu": "0-1"}},
    ]
    assert str(p.to_resource_set().nodelist) == "tioga[0-4]"
    p.mark_down("all")
    p.mark_up("0-4")
    got = p.alloc(1, p.parse_resource_request(jobspec(nodes=1, slots=6, cores=1)))
    assert got.dumps() == "rank0/core[0-5]"
    assert str(got.to_resource_set().nodelist) == "tioga0"


def test_bad_idset_in_mark_up_is_a_value_error(pool):
    with pytest.raises(ValueError, match="0-x"):
        pool.mark_up("0-x")


# --- property: any alloc/free sequence keeps the books straight ----------------

_REQUESTS = st.sampled_from(
    [
        {"nodes": 1},
        {"nodes": 2, "slots": 2, "cores": 1},
        {"nodes": rng(1, 3), "exclusive": True},
        {"slots": 3, "cores": 1, "gpus": 1},
        {"slots": 5, "cores": 2},
        {"nodes": 1, "constraints": {"properties": ["pdebug"]}},
    ]
)


@settings(derandomize=True, deadline=None, max_examples=60, database=None)
@given(st.lists(st.tuples(st.booleans(), _REQUESTS), max_size=30))
def test_alloc_free_sequences_keep_allocations_disjoint(ops):
    p = ResourcePool(machine_R())
    p.mark_down("all")
    p.mark_up("0-15")
    live = {}
    for jobid, (free_oldest, spec) in enumerate(ops, start=1):
        if free_oldest and live:
            old = min(live)
            p.free(old, live.pop(old), final=True)
            continue
        try:
            live[jobid] = alloc(p, jobid, **spec)
        except InsufficientResources:
            continue
        # every core/GPU is held by at most one job, and the pool agrees
        held = {}
        for jid, R in live.items():
            for rank, info in R.impl._ranks.items():
                for kind in ("cores", "gpus"):
                    for i in info[kind]:
                        assert held.setdefault((rank, kind, i), jid) == jid
        alloc_set = p.copy_allocated()
        assert alloc_set.ncores == sum(1 for k in held if k[1] == "cores")
        assert alloc_set.ngpus == sum(1 for k in held if k[1] == "gpus")
        assert sorted(jid for jid, _ in p.job_end_times()) == sorted(live)
    for jobid, R in live.items():
        p.free(jobid, R, final=True)
    assert allocated(p) == ""
    assert p.job_end_times() == []
