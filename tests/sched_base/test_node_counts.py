"""Whole nodes as counts: which requests qualify, and the node profile."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
from flux.resource.Rv1Pool import ResourceRequest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from flux_sched_base.compression import KeptSearches
from flux_sched_base.counts import NodeProfile, OrderedHolds, whole_nodes
from mock_broker.jobspec import make_jobspec

INF = math.inf
FOUR_CORES = {rank: 4 for rank in range(4)}
ONE_CORE = {rank: 1 for rank in range(8)}
NO_GPUS: dict = {}


def request(**kw):
    return ResourceRequest.from_jobspec(make_jobspec(**kw))


@pytest.mark.parametrize(
    "spec, cores, gpus, expected",
    [
        # Every core of a node, per node: whole nodes.
        ({"nodes": 2, "slots": 2, "cores": 4}, FOUR_CORES, NO_GPUS, 2),
        ({"nodes": 2, "slots": 8, "cores": 1}, FOUR_CORES, NO_GPUS, 2),
        ({"slots": 3, "cores": 4}, FOUR_CORES, NO_GPUS, 3),
        # Single-core nodes: any core-level job is whole nodes.
        ({"slots": 5, "cores": 1}, ONE_CORE, NO_GPUS, 5),
        ({"nodes": 3, "slots": 3, "cores": 1}, ONE_CORE, NO_GPUS, 3),
        # Exclusive nodes, on nodes of any size.
        (
            {"nodes": 2, "slots": 2, "cores": 1, "exclusive": True},
            {0: 2, 1: 8},
            NO_GPUS,
            2,
        ),
        # Part of a node, or nodes not all the same: not whole nodes.
        ({"nodes": 1, "slots": 1, "cores": 2}, FOUR_CORES, NO_GPUS, None),
        ({"slots": 3, "cores": 2}, FOUR_CORES, NO_GPUS, None),
        ({"nodes": 1, "slots": 1, "cores": 4}, {0: 4, 1: 8}, NO_GPUS, None),
        # GPUs some node lacks, constraints, ranges.
        (
            {"nodes": 1, "slots": 1, "cores": 4, "gpus": 1},
            FOUR_CORES,
            {0: 1, 1: 1},
            None,
        ),
        (
            {"nodes": 1, "slots": 1, "cores": 4, "constraints": {"ranks": ["0"]}},
            FOUR_CORES,
            NO_GPUS,
            None,
        ),
        (
            {"nodes": {"min": 1, "max": 2}, "slots": 1, "cores": 4},
            FOUR_CORES,
            NO_GPUS,
            None,
        ),
    ],
)
def test_whole_node_requests(spec, cores, gpus, expected):
    assert whole_nodes(request(**spec), cores, gpus) == expected


def item(end, *ranks):
    return SimpleNamespace(end=end, ranks={r: None for r in ranks})


def test_profile_from_running_jobs():
    # 4 up nodes (rank 4 is down): rank 0 free, 1 until 50, 2 and 3 (one
    # job each) until 100 and 200; a job on down rank 4 is not counted.
    running = [item(50.0, 1), item(100.0, 2), item(200.0, 3), item(300.0, 4)]
    p = NodeProfile.from_plan(0.0, [0, 1, 2, 3], running)
    assert (p.t, p.f, p.free_now, p.capacity) == (
        [0.0, 50.0, 100.0, 200.0],
        [1, 2, 3, 4],
        1,
        4,
    )


def test_overrunning_job_is_free_in_the_plan_but_not_now():
    p = NodeProfile.from_plan(100.0, [0, 1], [item(90.0, 0)])
    assert p.f[0] == 2 and p.free_now == 1
    assert not p.fits_now(150.0, 2)
    assert p.fits(100.0, 150.0, 2)


def test_earliest_fits_and_holds():
    p = NodeProfile(0.0, 1, [50.0, 100.0, INF])  # 4 up nodes, one never frees
    window = lambda length: lambda t: t + length  # noqa: E731
    assert p.earliest(1, window(30.0)) == 0.0
    assert p.earliest(3, window(30.0)) == 100.0
    assert p.earliest(4, window(30.0)) is None
    p.hold(100.0, 130.0, 2)  # a reservation at the shadow time
    # Two nodes from 50 for a long job: only one is spare at 100.
    assert p.earliest(2, window(1000.0)) == 130.0
    # One node now, past the shadow time: the extra node.
    assert p.fits_now(1000.0, 1)
    p.hold(0.0, 1000.0, 1)
    assert p.free_now == 0 and not p.fits(100.0, 130.0, 1)
    assert not p.fits_now(10.0, 1)
    # Releasing restores the steps.
    p.hold(0.0, 1000.0, -1)
    p.hold(100.0, 130.0, -2)
    assert (p.earliest(3, window(30.0)), p.free_now) == (100.0, 1)


def test_earliest_after_a_floor():
    p = NodeProfile(0.0, 0, [10.0, 20.0, 30.0])
    one = lambda t: t + 5.0  # noqa: E731
    assert p.earliest(1, one, floor=20.0) == 20.0
    assert p.earliest(1, one, floor=20.0, include_floor=False) == 30.0
    assert p.earliest(1, one, floor=12.0) == 12.0


def test_copy_is_independent():
    p = NodeProfile(0.0, 2, [])
    q = p.copy()
    q.hold(0.0, 10.0, 2)
    assert p.free_now == 2 and p.fits_now(10.0, 2)
    assert q.free_now == 0 and not q.fits_now(10.0, 1)


def _fits_brute(p: NodeProfile, start: float, end: float, nodes: int) -> bool:
    """Free nodes at every breakpoint inside the window, read one by one."""
    return all(
        f >= nodes
        for i, f in enumerate(p.f)
        if p.t[i] < end and (i + 1 == len(p.t) or p.t[i + 1] > start)
    )


@st.composite
def fragmented_profiles(draw) -> NodeProfile:
    """Two nodes free now, others freed over time, then holds and releases
    in any order: overcommitted in places (negative holds free nodes,
    positive ones may take more than there are)."""
    releases = draw(st.lists(st.integers(1, 60), max_size=12))
    holds = draw(
        st.lists(
            st.tuples(st.integers(0, 60), st.integers(1, 40), st.integers(-2, 3)),
            max_size=10,
        )
    )
    p = NodeProfile(0.0, 2, [float(r) for r in releases])
    for start, span, n in holds:
        p.hold(float(start), float(start + span), n)
    return p


@settings(max_examples=300, deadline=None)
@given(
    p=fragmented_profiles(),
    nodes=st.integers(1, 6),
    length=st.integers(1, 50),
    floor=st.integers(0, 70),
    include_floor=st.booleans(),
    cap=st.one_of(st.none(), st.integers(10, 80)),
    before=st.one_of(st.none(), st.integers(0, 90)),
)
def test_earliest_is_the_first_fitting_candidate(
    p, nodes, length, floor, include_floor, cap, before
):
    # The search must return the first candidate (the floor, then each
    # later breakpoint, all before *before*) whose whole window fits,
    # whatever shortcut it takes.
    def window(t: float) -> float:
        end = t + length
        return end if cap is None or end <= cap else max(float(cap), t + 1.0)

    floor = float(floor)
    bound = INF if before is None else float(before)
    candidates = ([floor] if include_floor else []) + [x for x in p.t if x > floor]
    expected = next(
        (c for c in candidates if c < bound and _fits_brute(p, c, window(c), nodes)),
        None,
    )
    found = p.earliest(
        nodes, window, floor=floor, include_floor=include_floor, before=bound
    )
    assert found == expected


@settings(max_examples=200, deadline=None)
@given(p=fragmented_profiles(), nodes=st.integers(1, 6), when=st.integers(0, 80))
def test_free_before_reads_every_instant_up_to_its_bound(p, nodes, when):
    first = next(
        (x for x, f in zip(p.t, p.f, strict=True) if x < when and f >= nodes), None
    )
    assert p.first_free(float(when), nodes) == first
    assert p.free_before(float(when), nodes) is (first is not None)


def _free_at(p: NodeProfile, when: float) -> int:
    return p.f[max(i for i, x in enumerate(p.t) if x <= when)]


@settings(max_examples=200, deadline=None)
@given(
    releases=st.lists(st.integers(1, 60), max_size=10),
    first=st.lists(st.tuples(st.integers(0, 60), st.integers(1, 40)), max_size=6),
    second=st.lists(st.tuples(st.integers(0, 60), st.integers(1, 40)), max_size=6),
    later=st.integers(0, 30),
)
def test_lighter_span_covers_every_instant_with_more_free(
    releases, first, second, later
):
    # The same running jobs, two sets of reservations, the second profile
    # read from a later now: the first instant (from that now) at which it
    # has more nodes free than the first one, and the end of the last
    # stretch that has (inf if it lasts), or none.
    base = [float(r) for r in releases]
    before = NodeProfile(0.0, 3, base)
    for start, span in first:
        before.hold(float(start), float(start + span), 1)
    now = float(later)
    after = NodeProfile(
        now, 3, [r for r in base if r > now] + [now] * sum(r <= now for r in base)
    )
    for start, span in second:
        after.hold(float(start), float(start + span), 1)
    instants = sorted({now, *(x for x in before.t + after.t if x >= now)})
    lighter = [_free_at(after, x) > _free_at(before, x) for x in instants]
    first = next((x for x, more in zip(instants, lighter, strict=True) if more), INF)
    if not any(lighter):
        last = -INF
    elif lighter[-1]:
        last = INF
    else:
        k = max(i for i, more in enumerate(lighter) if more)
        last = instants[k + 1]
    assert after.lighter_span(before) == (first, last)


@settings(max_examples=200, deadline=None)
@given(
    now=st.sampled_from([0.0, 50.0, 100.0]),
    free_now=st.integers(0, 8),
    totals=st.dictionaries(
        st.sampled_from([0.0, 10.0, 50.0, 75.0, 100.0, 150.0, 300.0, math.inf]),
        st.integers(1, 6),
    ),
)
def test_profile_from_totals_equals_the_general_constructor(now, free_now, totals):
    fast = NodeProfile.from_totals(now, free_now, totals)
    general = NodeProfile(now, free_now, totals.items())
    assert (fast.t, fast.f) == (general.t, general.f)
    assert (fast.now, fast.free_now, fast.capacity) == (
        general.now,
        general.free_now,
        general.capacity,
    )


@settings(max_examples=300, deadline=None)
@given(
    p=fragmented_profiles(),
    holds=st.lists(
        st.tuples(
            st.integers(-10, 70),
            st.one_of(st.integers(1, 50), st.just(None)),
            st.integers(-3, 3).filter(bool),
        ),
        max_size=10,
    ),
)
def test_adjusted_equals_holding_one_by_one(p, holds):
    items = [
        (float(start), INF if span is None else float(start + span), n)
        for start, span, n in holds
    ]
    original = (list(p.t), list(p.f))
    one_by_one = p.copy()
    for start, end, n in items:
        one_by_one.hold(start, end, n)
    swept = p.adjusted(items)
    # The same step function (a sweep drops points where nothing changes).
    assert (swept.steps(), swept.free_now) == (
        one_by_one.steps(),
        one_by_one.free_now,
    )
    assert swept.t[0] == p.now
    assert (p.t, p.f) == original  # a new profile; this one is untouched


_spans = st.tuples(st.integers(-10, 70), st.one_of(st.integers(1, 50), st.just(None)))


@settings(max_examples=500, deadline=None)
@given(p=fragmented_profiles(), old=_spans, new=_spans, nodes=st.integers(1, 3))
def test_move_equals_a_release_then_a_hold(p, old, new, nodes):
    def span(start, length):
        return float(start), INF if length is None else float(start + length)

    (start, end), (new_start, new_end) = span(*old), span(*new)
    expected = p.copy()
    expected.hold(start, end, -nodes)
    expected.hold(new_start, new_end, nodes)
    p.move(start, end, new_start, new_end, nodes)
    assert (p.steps(), p.free_now) == (expected.steps(), expected.free_now)


@settings(max_examples=200, deadline=None)
@given(p=fragmented_profiles())
def test_compacted_is_the_same_step_function_without_idle_breakpoints(p):
    compact = p.compacted()
    assert (compact.t, compact.f) == p.steps()
    assert (compact.now, compact.free_now, compact.capacity) == (
        p.now,
        p.free_now,
        p.capacity,
    )


@settings(max_examples=1500, deadline=None, derandomize=True)
@given(
    p=fragmented_profiles(),
    jobs=st.lists(
        st.tuples(
            st.integers(1, 4),  # units
            st.integers(1, 150),  # window length: often past the last step
            st.booleans(),  # or instead ending within 2 of the last step
            st.integers(-20, 30),  # how far the floor moves from the last start
            st.booleans(),  # include the floor
        ),
        min_size=1,
        max_size=10,
    ),
    cap=st.one_of(st.none(), st.integers(40, 160)),
)
def test_ordered_holds_place_as_earliest_then_hold(p, jobs, cap):
    # A forecast's placements: each the earliest window from its floor,
    # held before the next is asked, whatever shortcut the holds take;
    # the profile they leave is the one holding each in turn leaves.
    def window_of(length):
        def window(t: float) -> float:
            end = t + length
            return end if cap is None or end <= cap else max(float(cap), t + 1.0)

        return window

    slow = p.copy()
    holds = OrderedHolds(p)
    floor, include_floor = 0.0, False
    for units, length, near_last, move, include in jobs:
        if near_last:
            length = max(1.0, slow.t[-1] - floor + length % 5 - 2)
        window = window_of(length)
        expected = None
        if units <= slow.capacity:
            expected = slow.earliest(
                units, window, floor=floor, include_floor=include_floor
            )
        if expected is not None:
            slow.hold(expected, window(expected), units)
        start, end = holds.place(units, window, floor, include_floor)
        assert start == expected
        if start is None:
            break
        assert end == window(start)
        floor, include_floor = max(0.0, start + move), include
    kept = holds.profile
    assert (kept.t, kept.f, kept.free_now) == (slow.t, slow.f, slow.free_now)


_searches = st.tuples(
    st.just("search"),
    st.integers(1, 4),  # units
    st.integers(1, 40),  # window length
    st.integers(1, 70),  # its reservation's start
    st.integers(0, 20),  # searched up to this much before that start
)
_holds = st.tuples(
    st.just("hold"), st.integers(0, 60), st.integers(1, 40), st.integers(-3, 3)
)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(p=fragmented_profiles(), ops=st.lists(st.one_of(_searches, _holds), max_size=25))
def test_kept_searches_rule_out_only_starts_that_do_not_fit(p, ops):
    # Holders search in turn on one profile that holds and releases change
    # in between; a search that finds nothing is kept.  Whatever a later
    # holder is told its search may skip must hold no start that fits,
    # read afresh from now, however the holds and releases since split
    # and lightened the steps.
    kept = KeptSearches()
    kept.MIN_STEPS = 0
    for op in ops:
        if op[0] == "hold":
            _, start, length, units = op
            p.hold(float(start), float(start + length), units)
            continue
        _, units, length, start, short = op
        start = float(start)
        before = start - short
        known = kept.searched_until(p, units, float(length), start)
        if known > -INF:
            assert (
                p.earliest(units, lambda t, d=length: t + d, before=known, cap=start)
                is None
            )
        found = p.earliest(units, lambda t, d=length: t + d, before=before, cap=start)
        if found is None:
            kept.add(units, float(length), start, before)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(
    p=fragmented_profiles(),
    first=_searches,
    more=st.tuples(st.integers(0, 1), st.integers(0, 5), st.integers(0, 10)),
    # released from this long before the first holder's start (negative:
    # after it), for this long
    release=st.tuples(st.integers(-10, 30), st.integers(1, 40), st.integers(1, 3)),
)
def test_a_kept_search_is_forgotten_by_a_release_before_its_start_only(
    p, first, more, release
):
    # A search that found nothing is kept; then some units are released.
    # A holder asking no less is told how far it may skip: never past a
    # start that fits now, and (a release from the first one's start on
    # cannot open its windows) as far as the first one searched.
    _, units, length, start, short = first
    start, before = float(start), float(start - short)
    assume(p.earliest(units, lambda t: t + length, before=before, cap=start) is None)
    kept = KeptSearches()
    kept.MIN_STEPS = 0
    kept.searched_until(p, units, float(length), start)
    kept.add(units, float(length), start, before)
    ahead, span, freed = release
    at = max(0.0, start - ahead)
    p.hold(at, at + span, -freed)
    more_units, longer, later = more
    units, length, start = units + more_units, length + longer, start + later
    known = kept.searched_until(p, units, float(length), start)
    if known > -INF:
        assert p.earliest(units, lambda t: t + length, before=known, cap=start) is None
    if at >= start - later:
        assert known == before
