"""The reference schedulers' pool summarizes resources exactly as
flux-python's ``Rv1Pool`` does, and allocates exactly as it does."""

from __future__ import annotations

import syslog
from unittest import mock

from flux.resource.Rv1Pool import ResourceRequest, Rv1Pool
from flux.resource.Rv1Set import _display_idset, _idset_str
from hypothesis import example, given, settings
from hypothesis import strategies as st
from planner_helpers import ThresholdLog

from flux_sched_base.pool import (
    Pool,
    Rv1SummaryPool,
    display_idset,
    idset_text,
    one_slot_rank,
    summary,
)
from mock_broker.jobspec import make_jobspec
from mock_broker.machine import Machine, NodeGroup

ids = st.sets(st.integers(0, 40), max_size=20)


@settings(max_examples=300, deadline=None)
@given(ids)
def test_idsets_are_written_as_flux_python_writes_them(values):
    assert display_idset(values) == _display_idset(values)
    assert idset_text(values) == _idset_str(values)


def _pools(nodes: int, cores: int, gpus: int, properties=()):
    R = Machine.uniform(nodes, cores, gpus=gpus, properties=properties).to_R()
    return Rv1Pool(R), Rv1SummaryPool(R)


@settings(max_examples=60, deadline=None)
@given(
    nodes=st.integers(1, 6),
    cores=st.integers(1, 6),
    gpus=st.integers(0, 2),
    properties=st.sampled_from([(), ("amd",), ("+local", "big")]),
    requests=st.lists(
        st.tuples(st.integers(1, 4), st.integers(1, 3), st.booleans()),
        max_size=12,
    ),
    frees=st.lists(st.integers(0, 11), max_size=6),
)
def test_allocations_and_summaries_equal_rv1pools(
    nodes, cores, gpus, properties, requests, frees
):
    theirs, ours = _pools(nodes, cores, gpus, properties)
    assert ours.dumps() == theirs.dumps()
    assert ours.to_dict() == theirs.to_dict()
    assert ours.encode() == theirs.encode()
    granted = []
    for jobid, (slots, size, gpu) in enumerate(requests, start=1):
        spec = make_jobspec(slots=slots, cores=size, gpus=int(gpu and gpus > 0))
        request = ResourceRequest.from_jobspec(spec)
        outcomes = []
        for pool in (theirs, ours):
            try:
                outcomes.append(pool.alloc(jobid, request))
            except OSError as exc:
                outcomes.append(type(exc))
        a, b = outcomes
        if isinstance(a, type):
            assert a is b
            continue
        a.set_starttime(100.0 + jobid)
        b.set_starttime(100.0 + jobid)
        assert b.dumps() == a.dumps() and b.encode() == a.encode()
        granted.append(jobid)
    for k in frees:
        if k < len(granted):
            jobid = granted[k]
            if jobid in theirs._job_state:
                theirs.free(jobid)
                ours.free(jobid)
    assert ours.dumps() == theirs.dumps()
    assert ours.to_dict() == theirs.to_dict()
    allocated = ours.copy_allocated(), theirs.copy_allocated()
    assert allocated[0].dumps() == allocated[1].dumps()
    assert allocated[0].to_dict() == allocated[1].to_dict()


def test_the_facade_builds_the_summary_pool_and_wraps_its_allocations():
    pool = Pool(Machine.uniform(2, 4).to_R())
    assert type(pool.impl) is Rv1SummaryPool
    R = pool.alloc(1, ResourceRequest.from_jobspec(make_jobspec(slots=2, cores=2)))
    assert isinstance(R.impl, Rv1SummaryPool)
    assert R.dumps() == Rv1Pool(R.to_dict()).dumps()


# -- alloc: the same choice as Rv1Pool, from free counts -----------------------------


def _request(shape, gpus: int):
    """A ResourceRequest from a drawn shape: slot-only (fixed or ranged
    count), per-node (fixed or ranged node count), exclusive or not."""
    kind, n, size, gpu, exclusive, ranged = shape
    per_gpu = int(gpu and gpus > 0)
    if kind == "slots":
        spec = make_jobspec(slots=n, cores=size, gpus=per_gpu, duration=60.0 * gpu)
        if ranged:
            spec["resources"][0]["count"] = (
                {"min": 1, "max": n} if n > 1 else {"min": 1}
            )
    elif ranged:
        nodes = {"min": 1, "max": n} if n > 1 else {"min": 1}
        spec = make_jobspec(nodes=nodes, slots=1, cores=size, gpus=per_gpu)
    else:
        spec = make_jobspec(
            nodes=n, slots=n, cores=size, gpus=per_gpu, exclusive=exclusive or None
        )
    return ResourceRequest.from_jobspec(spec)


def _outcome(pool, jobid, request):
    try:
        R = pool.alloc(jobid, request)
    except OSError as exc:
        return type(exc), str(exc)
    return R.encode(), R._nslots, pool._job_state[jobid][0]


def _apply(op, arg, jobid, theirs, ours, granted, gpus):
    """One step of a random sequence on both pools: *op* "alloc" (*arg* a
    drawn shape), "free" or "partial" (*arg* an index into *granted*, the
    jobs granted so far), "down" or "up" (*arg* picks a rank), "hello" (a
    running job holding a core, and a GPU, the rank does not list)."""
    ranks = sorted(ours._ranks)
    if op == "alloc":
        request = _request(arg, gpus)
        a, b = _outcome(theirs, jobid, request), _outcome(ours, jobid, request)
        assert b == a
        if isinstance(a[0], str):
            granted.append(jobid)
    elif op in ("free", "partial") and arg < len(granted):
        jobid = granted[arg]
        alloc = ours._job_state.get(jobid)
        if alloc is None:
            return
        if op == "partial" and len(alloc[1]._ranks) > 1:
            part = min(alloc[1]._ranks)
            for pool in (theirs, ours):
                piece = pool._job_state[jobid][1]._copy_from_ranks({part})
                piece._ranks[part]["cores"] = alloc[1]._ranks[part]["cores"]
                piece._ranks[part]["gpus"] = alloc[1]._ranks[part]["gpus"]
                pool.free(jobid, piece)
        else:
            theirs.free(jobid)
            ours.free(jobid)
    elif op in ("down", "up"):
        rank = str(ranks[arg % len(ranks)])
        for pool in (theirs, ours):
            getattr(pool, f"mark_{op}")(rank)
    elif op == "hello":
        # A running job's R naming a core (and a GPU) beyond the
        # rank's own.
        rank = ranks[arg % len(ranks)]
        info = ours._ranks[rank]
        children = {"core": str(max(info["cores"]) + 1)}
        if arg % 2:
            children["gpu"] = str(max(info["gpus"], default=-1) + 1)
        R_lite = [{"rank": str(rank), "children": children}]
        held = {
            "version": 1,
            "execution": {
                "R_lite": R_lite,
                "starttime": 0.0,
                "expiration": 0.0,
            },
        }
        theirs.register_alloc(jobid, Rv1Pool(held))
        ours.register_alloc(jobid, Rv1SummaryPool(held))


shapes = st.tuples(
    st.sampled_from(["slots", "nodes"]),
    st.integers(1, 4),
    st.integers(1, 4),
    st.booleans(),
    st.booleans(),
    st.booleans(),
)
steps = st.lists(
    st.one_of(
        st.tuples(st.just("alloc"), shapes),
        st.tuples(st.just("free"), st.integers(0, 20)),
        st.tuples(st.just("partial"), st.integers(0, 20)),
        st.tuples(st.just("down"), st.integers(0, 7)),
        st.tuples(st.just("up"), st.integers(0, 7)),
        st.tuples(st.just("hello"), st.integers(0, 7)),
    ),
    max_size=25,
)


@settings(max_examples=150, deadline=None)
@given(
    groups=st.lists(
        st.tuples(st.integers(1, 3), st.integers(1, 5), st.integers(0, 2)),
        min_size=1,
        max_size=3,
    ),
    expiration=st.sampled_from([0.0, 5000.0]),
    steps=steps,
)
# A hello holding a core the rank does not list: one of its own is free
# although the counts (1 core, 1 held) say none.
@example(
    groups=[(1, 1, 0), (1, 1, 0)],
    expiration=0.0,
    steps=[
        ("down", 0),
        ("alloc", ("slots", 1, 1, False, False, False)),
        ("free", 0),
        ("hello", 1),
        ("alloc", ("slots", 1, 1, False, False, False)),
        ("alloc", ("slots", 1, 1, False, False, False)),
    ],
)
def test_alloc_picks_what_rv1pool_picks(groups, expiration, steps):
    """Allocation, exceptions, frees (whole and by rank), ranks going down
    and up, and hello allocations holding cores and GPUs the rank does not
    list: both pools answer alike and end in the same state."""
    machine = Machine(
        tuple(
            NodeGroup(n, c, g, ("big",) if c > 3 else ("+local",)) for n, c, g in groups
        )
    )
    R = machine.to_R()
    R["execution"]["expiration"] = expiration
    their_log: list = []
    our_log: list = []
    theirs = Rv1Pool(R, log=lambda level, text: their_log.append((level, text)))
    ours = Rv1SummaryPool(R, log=lambda level, text: our_log.append((level, text)))
    gpus = max(g for _, _, g in groups)
    granted: list[int] = []
    with mock.patch("time.time", return_value=1000.0):
        for jobid, (op, arg) in enumerate(steps, start=1):
            _apply(op, arg, jobid, theirs, ours, granted, gpus)
            assert ours.to_dict() == theirs.to_dict()
            assert ours.copy_allocated().to_dict() == theirs.copy_allocated().to_dict()
    assert ours.generation == theirs.generation
    assert sorted(ours._job_state) == sorted(theirs._job_state)
    assert our_log == their_log


def test_log_lines_are_formatted_only_when_the_level_keeps_them():
    R = Machine.uniform(2, 4).to_R()
    request = ResourceRequest.from_jobspec(make_jobspec(slots=1, cores=2))
    for level, kept in ((syslog.LOG_DEBUG, 3), (syslog.LOG_INFO, 1)):
        log = ThresholdLog(level)
        pool = Rv1SummaryPool(R, log=log)
        with mock.patch.object(
            Rv1SummaryPool,
            "dumps",
            autospec=True,
            side_effect=lambda pool: summary(pool._ranks),
        ) as dumps:
            R1 = pool.alloc(1, request)
            pool.free(1)
            pool.register_alloc(2, R1)
        assert len(log.lines) == kept
        assert dumps.call_count == kept
    # A pool copy (no logger) formats nothing.
    pool = Rv1SummaryPool(R).copy()
    with mock.patch.object(Rv1SummaryPool, "dumps") as dumps:
        pool.register_alloc(3, pool.alloc(3, request))
        pool.free(3)
    assert not dumps.called


def test_alloc_defers_to_rv1pool_for_constraints_and_overridden_choices():
    R = Machine.uniform(4, 2, properties=("amd",)).to_R()
    constrained = ResourceRequest.from_jobspec(
        make_jobspec(slots=1, constraints={"properties": ["amd"]})
    )
    pool = Rv1SummaryPool(R)
    with mock.patch.object(Rv1SummaryPool, "_worst_fit") as fast:
        pool.alloc(1, constrained)
        assert not fast.called

    class BestFirst(Rv1SummaryPool):
        def _sort_candidates(self, candidates):
            return sorted(candidates, key=lambda c: c[0])

    pool = BestFirst(R)
    with mock.patch.object(Rv1SummaryPool, "_worst_fit") as fast:
        assert pool.alloc(2, ResourceRequest.from_jobspec(make_jobspec())).dumps()
        assert not fast.called


@settings(max_examples=60, deadline=None)
@given(
    nodes=st.integers(1, 12),
    cores=st.integers(1, 6),
    gpus=st.integers(0, 2),
    steps=st.lists(
        st.one_of(
            st.tuples(
                st.just("alloc"),
                st.tuples(
                    st.just("slots"),
                    st.just(1),
                    st.integers(1, 6),
                    *[st.just(False)] * 3,
                ),
            ),
            st.tuples(st.just("free"), st.integers(0, 30)),
            st.tuples(st.just("down"), st.integers(0, 11)),
            st.tuples(st.just("up"), st.integers(0, 11)),
            st.tuples(st.just("direct"), st.integers(0, 11)),
            st.tuples(st.just("flip"), st.integers(0, 11)),
        ),
        min_size=20,
        max_size=200,
    ),
)
def test_room_index_answers_as_a_sweep_of_the_table(nodes, cores, gpus, steps):
    """After any mix of one-slot allocations, frees, ranks going down and
    up, and changes made to the rank table directly (cores taken or given
    back, up flags set) and then counted with ``touched``, the kept room
    index names the rank a sweep of the table names, for every slot size;
    Rv1Pool's own answers agree."""
    R = Machine.uniform(nodes, cores, gpus).to_R()
    ours, theirs = Rv1SummaryPool(R), Rv1Pool(R)
    ranks = sorted(ours._ranks)
    granted: list[int] = []
    kept = 0
    with mock.patch("time.time", return_value=1000.0):
        for jobid, (op, arg) in enumerate(steps, start=1):
            if op == "direct":
                # As a scratch copy moves: a core taken or given back in
                # the table itself, then counted.
                rank = ranks[arg % len(ranks)]
                for pool in (theirs, ours):
                    info = pool._ranks[rank]
                    free = info["cores"] - info["allocated_cores"]
                    if free:
                        info["allocated_cores"].add(min(free))
                    elif info["allocated_cores"]:
                        info["allocated_cores"].discard(min(info["allocated_cores"]))
                theirs._bump()
                ours.touched([rank])
            elif op == "flip":
                # As a scratch copy hides a rank or shows it again: the
                # up flag set in the table itself, then counted.
                rank = ranks[arg % len(ranks)]
                for pool in (theirs, ours):
                    pool._ranks[rank]["up"] = not pool._ranks[rank]["up"]
                theirs._bump()
                ours.touched([rank])
            else:
                _apply(op, arg, jobid, theirs, ours, granted, gpus)
            before = ours.__dict__.get("_room")
            index = ours.room_index()
            kept += index is before
            for size in range(1, cores + 2):
                assert index.roomiest(size) == one_slot_rank(ours._ranks.items(), size)
    # Allocations, frees and counted changes keep the index; only a rank
    # marked down or up (Rv1Pool's own code) makes a new one.
    assert kept >= sum(op not in ("down", "up") for op, _ in steps[1:])
