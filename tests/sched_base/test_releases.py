"""Releases kept up to date equal the profiles built from every running job."""

from __future__ import annotations

import math
from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from flux_sched_base.counts import NodeProfile
from flux_sched_base.releases import Releases

INF = math.inf
NODE_CORES = {rank: 4 for rank in range(5)}


def item(jobid, end, ranks):
    """A running item: *ranks* maps rank -> number of cores used."""
    return SimpleNamespace(
        jobid=jobid,
        end=end,
        ranks={r: (frozenset(range(n)), frozenset()) for r, n in ranks.items()},
    )


def same(a: NodeProfile, b: NodeProfile) -> bool:
    return (a.t, a.f, a.free_now, a.capacity) == (b.t, b.f, b.free_now, b.capacity)


def check(releases: Releases, up: set, running: dict, now: float) -> None:
    items = list(running.values())
    assert same(
        releases.core_profile(now),
        NodeProfile.from_cores(now, up, NODE_CORES, items),
    )
    assert same(releases.node_profile(now), NodeProfile.from_plan(now, up, items))
    # A pass holds its starts in the profile it got: the next is unaffected.
    releases.core_profile(now).hold(now, INF, 1)
    releases.node_profile(now).hold(now, 40.0, 1)
    assert same(
        releases.core_profile(now),
        NodeProfile.from_cores(now, up, NODE_CORES, items),
    )
    assert same(releases.node_profile(now), NodeProfile.from_plan(now, up, items))


ends = st.sampled_from([5.0, 10.0, 20.0, 30.0, INF])
usage = st.dictionaries(st.integers(0, 4), st.integers(1, 4), min_size=1, max_size=3)
operation = st.one_of(
    st.tuples(st.just("start"), ends, usage),
    st.tuples(st.just("end"), st.integers(0, 50)),
    st.tuples(st.just("move"), st.integers(0, 50), ends),
    st.tuples(st.just("down"), st.integers(0, 4)),
    st.tuples(st.just("up"), st.integers(0, 4)),
)


def apply(op, serial: int, releases: Releases, up: set, running: dict) -> bool:
    """Carry out one generated operation; True if it was a reset."""
    if op[0] == "start":
        running[serial] = it = item(serial, op[1], op[2])
        releases.add(it)
    elif op[0] in ("end", "move") and running:
        jobid = sorted(running)[op[1] % len(running)]
        releases.remove(running[jobid])
        if op[0] == "end":
            del running[jobid]
        else:
            running[jobid].end = op[2]  # an expiration update
            releases.add(running[jobid])
    elif op[0] in ("down", "up"):
        (up.discard if op[0] == "down" else up.add)(op[1])
        releases.reset(up, NODE_CORES, running.values())
        return True
    return False


@settings(max_examples=150, deadline=None)
@given(st.lists(operation, max_size=40), st.sampled_from([0.0, 10.0, 25.0]))
def test_releases_match_profiles_built_from_scratch(operations, now):
    up = set(NODE_CORES)
    running: dict[int, SimpleNamespace] = {}
    releases = Releases()
    releases.reset(up, NODE_CORES, [])
    for serial, op in enumerate(operations):
        apply(op, serial, releases, up, running)
        check(releases, up, running, now)


def test_a_job_past_its_end_is_free_in_the_plan_but_not_now():
    releases = Releases()
    releases.reset({0, 1}, NODE_CORES, [item(1, 90.0, {0: 4})])
    cores = releases.core_profile(100.0)
    nodes = releases.node_profile(100.0)
    assert (cores.f[0], cores.free_now) == (8, 4)
    assert (nodes.f[0], nodes.free_now) == (2, 1)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(operation, max_size=12),
    st.lists(operation, max_size=20),
    st.sampled_from([0.0, 10.0, 25.0]),
    st.sampled_from([0.0, 7.0, 30.0]),
)
def test_changes_since_a_mark_bring_an_old_profile_up_to_date(
    before, after, now, later
):
    # The profiles built at a mark, read from a later now and adjusted by
    # the changes recorded since, equal the profiles built then; a reset
    # (resources up or down) loses the record.
    up = set(NODE_CORES)
    running: dict[int, SimpleNamespace] = {}
    releases = Releases()
    releases.reset(up, NODE_CORES, [])
    for serial, op in enumerate(before):
        apply(op, serial, releases, up, running)
    marked = {unit: releases._profile(unit, now) for unit in ("cores", "nodes")}
    releases.mark()
    reset = False
    for serial, op in enumerate(after, start=len(before)):
        reset |= apply(op, serial, releases, up, running)
    then = now + later
    for unit, old in marked.items():
        changes = releases.changes(unit)
        if reset:
            assert changes is None
            continue
        brought = old.advanced(then).adjusted(
            (then, end, delta) for end, delta in changes.items() if end > then
        )
        fresh = releases._profile(unit, then)
        assert brought.steps() == fresh.steps()
        assert brought.capacity == fresh.capacity
