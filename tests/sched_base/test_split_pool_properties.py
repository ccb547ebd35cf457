"""SplitPool properties on random fragmented states, against a brute-force
oracle: no double allocation, exact and even shares, matching ids, the
fewest nodes that can take the request now, and a placement whenever one
exists."""

from __future__ import annotations

import itertools

import pytest
from flux.resource import InfeasibleRequest, InsufficientResources
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)
from split_pool_helpers import occupy, shares, slots

from flux_sched_base.even_split import layouts, near_layouts
from flux_sched_base.planbook import parse_ranks
from flux_sched_base.split_pool import SplitPool
from mock_broker.machine import Machine
from mock_broker.runtime.clock import VirtualClock

NODES, CORES, GPUS = 5, 8, 4
MACHINE = Machine.uniform(NODES, CORES, GPUS)
#: (cores, gpus) per slot: 4, 8 and 2 slots a node.
SLOT_SHAPES = [(2, 1), (1, 0), (3, 1)]
OPTIONS = [(s, m) for s in (True, False) for m in (True, False)]

_props = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)


@pytest.fixture(autouse=True)
def frozen_time():
    with VirtualClock(1000.0).active():
        yield


_busy = st.tuples(
    st.frozensets(st.integers(0, CORES - 1)), st.frozensets(st.integers(0, GPUS - 1))
)
states = st.lists(_busy, min_size=NODES, max_size=NODES)
requests = st.one_of(
    st.tuples(st.just(None), st.integers(1, 24)),  # slot-only
    st.tuples(st.integers(1, 3), st.integers(1, 2)),  # nodes, slots a node
)


def _pool(busy, split2fit, match_slots):
    # A job holding a GPU holds a core of its node too.
    busy = [(c or frozenset({0}) if g else c, g) for c, g in busy]
    pool = SplitPool(MACHINE.to_R(), split2fit=split2fit, match_slots=match_slots)
    for rank, (cores, gpus) in enumerate(busy):
        if cores or gpus:
            occupy(pool, 100 + rank, {rank: (cores, gpus)})
    free = {
        rank: (frozenset(range(CORES)) - c, frozenset(range(GPUS)) - g)
        for rank, (c, g) in enumerate(busy)
    }
    return pool, free


def _room(cores, gpus, size, per_gpu):
    n = len(cores) // size
    return min(n, len(gpus) // per_gpu) if per_gpu else n


def _offered(free, nodes, ncores, ngpus, match):
    """Brute force: can *nodes* nodes each give *ncores* cores and *ngpus*
    GPUs (the same ids on every node, if *match*)?"""
    if not match or nodes == 1:
        roomy = [
            r for r, (c, g) in free.items() if len(c) >= ncores and len(g) >= ngpus
        ]
        return len(roomy) >= nodes
    for cset in itertools.combinations(range(CORES), ncores):
        for gset in itertools.combinations(range(GPUS), ngpus):
            c, g = set(cset), set(gset)
            if sum(1 for fc, fg in free.values() if c <= fc and g <= fg) >= nodes:
                return True
    return False


def _expected(free, request, size, per_gpu, split2fit, match):
    """The layout the rules choose now, ``(nodes, per_node, short)``, or
    None if nothing fits now."""
    if request.nnodes:
        per_node = request.nslots // request.nnodes
        ok = _offered(free, request.nnodes, per_node * size, per_node * per_gpu, match)
        return (request.nnodes, per_node, 0) if ok else None
    capacity = _room(frozenset(range(CORES)), frozenset(range(GPUS)), size, per_gpu)
    capacities = [capacity] * NODES
    total = request.nslots
    splits = list(layouts(total, capacities)) or list(near_layouts(total, capacities))
    if not split2fit:
        splits = splits[:1]
    for nodes, per_node, short in splits:
        if _offered(free, nodes, per_node * size, per_node * per_gpu, match):
            return nodes, per_node, short
    return None


@_props
@given(
    states,
    requests,
    st.sampled_from(SLOT_SHAPES),
    st.sampled_from(OPTIONS),
)
def test_placements_follow_the_rules_and_miss_none(busy, shape, slot, options):
    split2fit, match = options
    size, per_gpu = slot
    pool, free = _pool(busy, split2fit, match)
    nnodes, count = shape
    nslots = count * nnodes if nnodes else count
    request = slots(pool, nslots, nodes=nnodes, cores=size, gpus=per_gpu)
    capacity = _room(frozenset(range(CORES)), frozenset(range(GPUS)), size, per_gpu)
    if (count if nnodes else nslots) > (capacity if nnodes else NODES * capacity):
        with pytest.raises(InfeasibleRequest):
            pool.alloc(1, request)
        return
    expected = _expected(free, request, size, per_gpu, split2fit, match)
    if expected is None:
        with pytest.raises(InsufficientResources) as caught:
            pool.alloc(1, request)
        assert not isinstance(caught.value, InfeasibleRequest)
        return
    got = shares(pool.alloc(1, request))
    nodes, per_node, short = expected
    # the layout the rules choose: the fewest nodes that can take it now
    counts = sorted(len(c) // size for c, _ in got.values())
    assert counts == sorted([per_node] * (nodes - short) + [per_node - 1] * short)
    for rank, (cores, gpus) in got.items():
        # never what another job holds, and whole slots
        assert cores <= free[rank][0] and gpus <= free[rank][1]
        assert len(cores) % size == 0 and len(gpus) == len(cores) // size * per_gpu
    if match:
        full = [v for v in got.values() if len(v[0]) == per_node * size]
        assert len(set(full)) == 1
        for cores, gpus in got.values():  # shorter shares: the lowest ids
            assert cores <= full[0][0] and gpus <= full[0][1]
    if nodes == 1:
        (rank,) = got
        rooms = [_room(c, g, size, per_gpu) for c, g in free.values()]
        fitting = [r for r in rooms if r >= per_node]
        assert _room(*free[rank], size, per_gpu) == min(fitting)


class Lifecycle(RuleBasedStateMachine):
    """Allocations and (partial) frees in any order never hand out a core
    or GPU twice, and everything comes back."""

    @initialize(options=st.sampled_from(OPTIONS))
    def start(self, options):
        self.clock = VirtualClock(1000.0)
        self.pool = SplitPool(
            MACHINE.to_R(), split2fit=options[0], match_slots=options[1]
        )
        self.live: dict[int, dict] = {}
        self.next_id = 1

    @rule(shape=requests, slot=st.sampled_from(SLOT_SHAPES))
    def alloc(self, shape, slot):
        nnodes, count = shape
        nslots = count * nnodes if nnodes else count
        request = slots(self.pool, nslots, nodes=nnodes, cores=slot[0], gpus=slot[1])
        jobid = self.next_id
        self.next_id += 1
        try:
            with self.clock.active():
                R = self.pool.alloc(jobid, request)
        except (InsufficientResources, InfeasibleRequest):
            return
        self.live[jobid] = shares(R)

    @precondition(lambda self: self.live)
    @rule(data=st.data())
    def free(self, data):
        jobid = data.draw(st.sampled_from(sorted(self.live)))
        held = self.live[jobid]
        ranks = sorted(held)
        if len(ranks) > 1 and data.draw(st.booleans()):
            from flux.resource import ResourcePool
            from split_pool_helpers import R_of

            part = {ranks[0]: held.pop(ranks[0])}
            self.pool.free(jobid, ResourcePool(R_of(part)))
            return
        self.pool.free(jobid, None, final=True)
        del self.live[jobid]

    @invariant()
    def no_double_allocation(self):
        if not hasattr(self, "pool"):
            return
        seen: dict[int, tuple[set, set]] = {}
        for held in self.live.values():
            for rank, (cores, gpus) in held.items():
                c, g = seen.setdefault(rank, (set(), set()))
                assert not (c & cores) and not (g & gpus)
                c |= cores
                g |= gpus
        allocated = parse_ranks(self.pool.copy_allocated().to_dict())
        assert {r: (set(c), set(g)) for r, (c, g) in allocated.items()} == {
            r: v for r, v in seen.items() if v[0] or v[1]
        }


Lifecycle.TestCase.settings = settings(
    max_examples=40,
    stateful_step_count=25,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
test_lifecycle = Lifecycle.TestCase
