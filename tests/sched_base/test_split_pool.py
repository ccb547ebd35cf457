"""SplitPool: best fit on one node, even splits, split2fit and match_slots,
on GPU nodes (16 cores, 4 GPUs; slots of 4 cores and 1 GPU)."""

from __future__ import annotations

import pytest
from flux.resource import (
    InfeasibleRequest,
    InsufficientResources,
    ResourceCount,
    ResourcePool,
)
from flux.resource.Rv1Pool import ResourceRequest
from split_pool_helpers import MACHINE, R_of, occupy, shares, slot_counts, slots

from flux_sched_base.planner import Planner
from flux_sched_base.split_pool import (
    Rv1SplitPool,
    SplitPool,
    SplitPoolAnySlots,
    SplitPoolMinNodes,
    SplitPoolMinNodesAnySlots,
    pool_class,
)
from mock_broker.jobspec import make_jobspec
from mock_broker.machine import Machine, NodeGroup
from mock_broker.runtime.clock import VirtualClock

NOW = 1000.0


@pytest.fixture(autouse=True)
def frozen_time():
    with VirtualClock(NOW).active():
        yield


def fresh(cls=SplitPool, machine=MACHINE, **kw):
    return cls(machine.to_R(), **kw)


def fill(pool, jobid, ranks, used_slots):
    """Use the first *used_slots* slots (cores 0.., GPUs 0..) of *ranks*."""
    occupy(
        pool,
        jobid,
        {r: (range(4 * used_slots), range(used_slots)) for r in ranks},
    )


# -- options --------------------------------------------------------------------


def test_options_default_on_and_come_as_keyword_arguments():
    assert pool_class is SplitPool
    pool = fresh()
    assert isinstance(pool.impl, Rv1SplitPool)
    assert (pool.impl.split2fit, pool.impl.match_slots) == (True, True)
    assert pool.impl.known_options == {"split2fit", "match_slots"}
    assert pool.impl.name == "SplitPool"
    off = fresh(split2fit=False, match_slots=0)
    assert (off.impl.split2fit, off.impl.match_slots) == (False, False)
    with pytest.raises(ValueError, match="split2fit='no'"):
        fresh(split2fit="no")


@pytest.mark.parametrize(
    "cls, split2fit, match_slots",
    [
        (SplitPoolAnySlots, True, False),
        (SplitPoolMinNodes, False, True),
        (SplitPoolMinNodesAnySlots, False, False),
    ],
)
def test_each_combination_has_a_class_and_keywords_still_win(
    cls, split2fit, match_slots
):
    pool = fresh(cls)
    assert (pool.impl.split2fit, pool.impl.match_slots) == (split2fit, match_slots)
    assert fresh(cls, match_slots=True).impl.match_slots is True


def test_copies_and_allocations_keep_the_options():
    pool = fresh(split2fit=False)
    copy = pool.copy()
    assert isinstance(copy, SplitPool) and copy.impl.split2fit is False
    R = copy.alloc(1, slots(copy, 2))
    assert isinstance(R, SplitPool) and R.impl.split2fit is False
    assert not list(pool.copy_allocated().ranks)  # the copy's alloc stays there


# -- one node: the smallest sufficient free space ------------------------------------


def test_a_request_that_fits_one_node_takes_the_smallest_sufficient_space():
    pool = fresh()
    fill(pool, 1, [0], 3)  # 1 slot free
    fill(pool, 2, [1], 2)  # 2 free
    fill(pool, 3, [2], 1)  # 3 free; ranks 3-15 idle (4 free)
    assert slot_counts(pool.alloc(10, slots(pool, 2))) == {1: 2}
    assert slot_counts(pool.alloc(11, slots(pool, 3))) == {2: 3}
    assert slot_counts(pool.alloc(12, slots(pool, 1))) == {0: 1}
    # the lowest free ids on that node
    assert shares(pool.alloc(13, slots(pool, 4)))[3] == (
        frozenset(range(16)),
        frozenset(range(4)),
    )
    # flux-python's Rv1Pool fills the emptiest node instead
    upstream = ResourcePool(MACHINE.to_R())
    fill(upstream, 1, [0], 3)
    assert set(slot_counts(upstream.alloc(10, slots(upstream, 1)))) != {0}


def test_a_cpu_only_job_keeps_off_free_gpus_when_it_can():
    pool = fresh()
    # rank 0: 4 cores free, its GPUs taken; rank 1: 4 cores and a GPU free
    occupy(pool, 1, {0: (range(12), range(4)), 1: (range(12), range(3))})
    fill(pool, 2, range(2, 16), 4)
    R = pool.alloc(10, slots(pool, 1, cores=4, gpus=0))
    assert set(shares(R)) == {0}


# -- more than a node: even splits ----------------------------------------------------


@pytest.mark.parametrize(
    "nslots, nodes, per_node",
    [(8, 2, 4), (6, 2, 3), (12, 3, 4), (10, 5, 2), (7, 7, 1), (64, 16, 4)],
)
def test_a_larger_request_is_split_evenly_over_the_fewest_nodes(
    nslots, nodes, per_node
):
    pool = fresh()
    R = pool.alloc(1, slots(pool, nslots))
    counts = slot_counts(R)
    assert len(counts) == nodes and set(counts.values()) == {per_node}
    # the same ids on every node
    assert set(shares(R).values()) == {
        (frozenset(range(4 * per_node)), frozenset(range(per_node)))
    }


def test_split2fit_spreads_over_more_nodes_when_the_fewest_are_busy():
    # Every node has 2 of its 4 slots in use: 8 slots cannot go on 2 nodes.
    for cls, placed in ((SplitPool, True), (SplitPoolMinNodes, False)):
        pool = fresh(cls)
        fill(pool, 1, range(16), 2)
        request = slots(pool, 8)
        if placed:
            R = pool.alloc(10, request)
            assert sorted(slot_counts(R).values()) == [2, 2, 2, 2]
            assert set(shares(R).values()) == {
                (frozenset(range(8, 16)), frozenset({2, 3}))
            }
        else:
            # not now, but it will fit: the job waits, it is not denied
            with pytest.raises(InsufficientResources):
                pool.alloc(10, request)
            pool.check_feasibility(request)


def test_without_split2fit_the_job_gets_the_fewest_nodes_once_free():
    pool = fresh(SplitPoolMinNodes)
    fill(pool, 1, range(16), 2)
    pool.free(1)
    assert sorted(slot_counts(pool.alloc(10, slots(pool, 8))).values()) == [4, 4]


def test_split2fit_also_splits_a_one_node_request_no_node_has_room_for():
    pool = fresh()
    fill(pool, 1, range(16), 3)  # one slot free everywhere
    assert sorted(slot_counts(pool.alloc(10, slots(pool, 3))).values()) == [1, 1, 1]
    strict = fresh(SplitPoolMinNodes)
    fill(strict, 1, range(16), 3)
    with pytest.raises(InsufficientResources):
        strict.alloc(10, slots(strict, 3))


# -- match_slots ------------------------------------------------------------------------


def _two_halves(cls):
    """Only ranks 0 and 1 have room, 2 slots each, on different GPUs."""
    pool = fresh(cls)
    fill(pool, 1, range(2, 16), 4)
    occupy(pool, 2, {0: (range(8, 16), {2, 3}), 1: (range(8), {0, 1})})
    return pool


def test_match_slots_rules_out_a_split_whose_ids_differ():
    pool = _two_halves(SplitPool)
    request = slots(pool, 4)
    with pytest.raises(InsufficientResources):
        pool.alloc(10, request)
    pool.check_feasibility(request)  # it is only a matter of time
    # without matching, the same state takes it
    anyslots = _two_halves(SplitPoolAnySlots)
    R = anyslots.alloc(10, slots(anyslots, 4))
    assert shares(R) == {
        0: (frozenset(range(8)), frozenset({0, 1})),
        1: (frozenset(range(8, 16)), frozenset({2, 3})),
    }


def test_match_slots_finds_the_nodes_whose_ids_agree():
    pool = _two_halves(SplitPool)
    # rank 2 gets the free ids of rank 0: cores 0-7 and GPUs 0-1
    pool.free(1, ResourcePool(R_of({2: (range(16), range(4))})))
    occupy(pool, 3, {2: (range(8, 16), {2, 3})})
    R = pool.alloc(10, slots(pool, 4))
    assert shares(R) == {
        0: (frozenset(range(8)), frozenset({0, 1})),
        2: (frozenset(range(8)), frozenset({0, 1})),
    }


def _half_free(cls):
    """Ranks 0-3 have 2 slots free: 0 and 2 on GPUs 2-3, 1 and 3 on 0-1."""
    pool = fresh(cls)
    fill(pool, 1, range(4, 16), 4)
    occupy(
        pool,
        2,
        {
            0: (range(8), {0, 1}),
            1: (range(8, 16), {2, 3}),
            2: (range(8), {0, 1}),
            3: (range(8, 16), {2, 3}),
        },
    )
    return pool


def test_node_level_requests_get_matching_ids():
    pool = _half_free(SplitPool)
    R = pool.alloc(10, slots(pool, 4, nodes=2))
    assert shares(R) == {
        0: (frozenset(range(8, 16)), frozenset({2, 3})),
        2: (frozenset(range(8, 16)), frozenset({2, 3})),
    }
    # without matching: the first two of the equally tight nodes
    pool = _half_free(SplitPoolAnySlots)
    R = pool.alloc(10, slots(pool, 4, nodes=2))
    assert set(shares(R)) == {0, 1}
    assert len(set(shares(R).values())) == 2


def test_node_level_requests_take_the_tightest_nodes():
    pool = fresh()
    fill(pool, 1, [5], 2)  # 2 free
    fill(pool, 2, [9], 3)  # 1 free
    fill(pool, 3, [12], 2)  # 2 free
    R = pool.alloc(10, slots(pool, 4, nodes=2))  # 2 slots a node
    assert set(shares(R)) == {5, 12}
    assert set(shares(R).values()) == {(frozenset(range(8, 16)), frozenset({2, 3}))}
    R = pool.alloc(11, slots(pool, 2, nodes=2))  # 1 slot a node
    assert set(shares(R)) == {0, 9}


# -- counts with no even split -----------------------------------------------------------


def test_a_count_no_even_split_allows_goes_as_evenly_as_it_can():
    # The kit's case: 5 slots of 3 cores where a node holds 2 of them.
    machine = Machine.uniform(4, 8, 2)
    pool = fresh(machine=machine)
    R = pool.alloc(1, slots(pool, 5, cores=3, gpus=0))
    counts = slot_counts(R, cores=3, gpus=0)
    assert sorted(counts.values()) == [1, 2, 2]
    cores = sorted((sorted(c) for c, _ in shares(R).values()), key=len)
    assert cores == [[0, 1, 2], [0, 1, 2, 3, 4, 5], [0, 1, 2, 3, 4, 5]]
    # 17 GPU slots on 16 nodes of 4: 2 nodes of 4 and 3 of 3, ids nested
    pool = fresh()
    counts = slot_counts(pool.alloc(2, slots(pool, 17)))
    assert sorted(counts.values()) == [3, 3, 3, 4, 4]


# -- never, or not now ---------------------------------------------------------------------


def test_infeasible_and_insufficient_are_told_apart():
    pool = fresh()
    with pytest.raises(InfeasibleRequest):
        pool.alloc(1, slots(pool, 65))  # more than the machine
    fill(pool, 2, range(16), 4)
    with pytest.raises(InsufficientResources) as caught:
        pool.alloc(3, slots(pool, 5))
    assert not isinstance(caught.value, InfeasibleRequest)


def test_a_count_with_no_split_at_all_is_infeasible_where_rv1pool_accepts_it():
    # One big node (4 slots) and two small ones (1 slot each): 6 slots fit
    # only as 4 + 1 + 1, which is not a split shares one slot apart.
    machine = Machine((NodeGroup(1, 16, 4), NodeGroup(2, 4, 1)))
    pool = fresh(machine=machine)
    request = slots(pool, 6)
    with pytest.raises(InfeasibleRequest, match="cannot be split evenly"):
        pool.check_feasibility(request)
    with pytest.raises(InfeasibleRequest):
        pool.alloc(1, request)
    upstream = ResourcePool(machine.to_R())
    assert sum(slot_counts(upstream.alloc(1, slots(upstream, 6))).values()) == 6


def test_matching_is_infeasible_on_nodes_numbered_differently():
    R = R_of({0: ("0-3", "0-1"), 1: ("0-3", "2-3")})
    request = slots(SplitPool(R), 2, nodes=2, cores=2, gpus=1)
    with pytest.raises(InfeasibleRequest, match="same 2 core ids and 1 GPU ids"):
        SplitPool(R).check_feasibility(request)
    SplitPoolAnySlots(R).check_feasibility(request)
    assert SplitPool(R).interchangeable_units == frozenset()
    assert SplitPoolAnySlots(R).interchangeable_units == {"nodes"}
    assert fresh().interchangeable_units == {"nodes"}


def test_cores_count_as_interchangeable_on_one_node_only():
    # On one node every rule has that node alone to choose: any free cores
    # host a request of one-core slots, as counting assumes.
    one = R_of({0: ("0-47", "")})
    for cls in (SplitPool, SplitPoolAnySlots):
        assert cls(one).interchangeable_units == {"nodes", "cores"}
    assert "cores" not in fresh().interchangeable_units
    two = R_of({0: ("0-3", ""), 1: ("0-3", "")})
    assert SplitPool(two).interchangeable_units == {"nodes"}


# -- exclusive, ranges ---------------------------------------------------------------------


def test_exclusive_requests_take_whole_idle_nodes():
    pool = fresh()
    fill(pool, 1, [0, 1], 1)
    R = pool.alloc(10, slots(pool, 2, nodes=2, exclusive=True))
    assert set(shares(R)) == {2, 3}
    assert set(shares(R).values()) == {(frozenset(range(16)), frozenset(range(4)))}


def test_a_slot_range_gets_the_most_slots_that_split_evenly():
    pool = fresh()
    fill(pool, 1, range(3, 16), 4)
    fill(pool, 2, range(3), 2)  # ranks 0-2: 2 free slots each, 6 in all
    spec = make_jobspec(slots=1, cores=4, gpus=1)
    spec["resources"][0]["count"] = {"min": 2, "max": 8}
    R = pool.alloc(10, pool.parse_resource_request(spec))
    assert sorted(slot_counts(R).values()) == [2, 2, 2]
    assert R.impl._nslots == 6


# -- partial frees and the planner ------------------------------------------------------


def test_partial_frees_and_reregistration_work_as_in_rv1pool():
    pool = fresh()
    R = pool.alloc(1, slots(pool, 8))
    ranks = sorted(shares(R))
    first = ResourcePool(R_of({ranks[0]: shares(R)[ranks[0]]}))
    pool.free(1, first)
    assert sorted(shares(pool.copy_allocated().to_dict())) == ranks[1:]
    pool.free(1, None, final=True)
    assert not list(pool.copy_allocated().ranks)
    other = fresh()
    other.register_alloc(1, R)
    assert sorted(shares(other.copy_allocated().to_dict())) == ranks


def test_planner_reservations_and_starts_use_the_split_pool():
    pool = fresh()
    planner = Planner(pool)
    planner.begin_pass(NOW)
    # every node half busy until NOW + 100
    for rank in range(16):
        R = ResourcePool(R_of({rank: (range(8), {0, 1})}))
        pool.register_alloc(rank + 1, R)
        planner.add_running(rank + 1, R, NOW + 100.0)
    # 8 slots now: split2fit spreads them over 4 nodes, matching ids
    R = planner.start_now(50, slots(pool, 8, duration=50.0))
    assert sorted(slot_counts(R).values()) == [2, 2, 2, 2]
    assert len(set(shares(R).values())) == 1
    # 32 slots fit when that job ends (16 nodes of 2), 64 when all do
    for jobid, nslots, start, per_node in ((51, 32, 50.0, 2), (52, 64, 100.0, 4)):
        t, R = planner.earliest(jobid, slots(pool, nslots, duration=50.0), floor=NOW)
        assert t == NOW + start
        assert sorted(slot_counts(R).values()) == [per_node] * 16
        assert len(set(shares(R).values())) == 1


def test_the_planner_counts_whole_nodes_only_where_idle_nodes_are_alike():
    whole = slots(fresh(), 2, nodes=2, cores=16, gpus=4)
    assert Planner(fresh()).whole_nodes(whole) == 2  # the count-based path
    R = R_of({0: ("0-3", "0-1"), 1: ("0-3", "2-3")})
    request = slots(SplitPool(R), 1, nodes=1, cores=4, gpus=2)
    assert Planner(SplitPoolAnySlots(R)).whole_nodes(request) == 1
    assert Planner(SplitPool(R)).whole_nodes(request) is None


def test_the_planner_never_counts_free_cores_with_the_split_pool():
    one_core_slots = slots(fresh(), 7, cores=1, gpus=0)
    assert Planner(ResourcePool(MACHINE.to_R())).core_count(one_core_slots) == 7
    for cls in (SplitPool, SplitPoolMinNodesAnySlots):
        assert Planner(fresh(cls)).core_count(one_core_slots) is None


def test_a_request_for_slots_of_no_core_is_infeasible():
    # The jobspec parser refuses a count of 0; a request built by hand
    # (another parser, a test) is refused too, not divided by.
    pool = fresh()
    request = ResourceRequest(None, ResourceCount(2, 2), 0, 0, 0.0, None, False)
    with pytest.raises(InfeasibleRequest, match="at least one core"):
        pool.check_feasibility(request)
    with pytest.raises(InfeasibleRequest, match="at least one core"):
        pool.alloc(1, request)
