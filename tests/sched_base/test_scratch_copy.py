"""Scratch copies of the pool: they always show the window asked for,
follow passes, frees and hand-overs, and hide ranks from their allocator."""

from __future__ import annotations

import syslog
from unittest import mock

import pytest
from flux.idset import IDset
from flux.resource import InsufficientResources
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from planner_helpers import (  # noqa: F401 (frozen_time: an autouse fixture)
    NOW,
    ThresholdLog,
    frozen_time,
    make_planner,
    ranks_of,
    request,
    run,
)

from flux_sched_base.planbook import parse_ranks
from flux_sched_base.pool import Pool, Rv1SummaryPool
from flux_sched_base.scratch import Scratch

# -- scratch copies against a brute-force recomputation ------------------------


def expected_allocated(planner, t, tend, considered):
    cores: dict[int, set] = {}
    for item in planner.running.values():
        if t == planner.now or item.end > t:
            for rank, (c, _) in item.ranks.items():
                cores.setdefault(rank, set()).update(c)
    for item in planner.reservations.values():
        if considered(item) and item.start < tend and item.end > t:
            for rank, (c, _) in item.ranks.items():
                cores.setdefault(rank, set()).update(c)
    return cores


def scratch_allocated(scratch):
    return {
        rank: set(info["allocated_cores"])
        for rank, info in scratch.pool.impl._ranks.items()
        if info["allocated_cores"]
    }


_op = st.tuples(
    st.sampled_from(["goto", "goto", "goto", "drop", "start"]),
    st.integers(0, 8),  # time step x 50 s
    st.integers(1, 6),  # duration x 50 s
    st.integers(0, 3),  # which / exclude
)


@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    st.lists(st.tuples(st.integers(1, 2), st.integers(1, 8)), min_size=1, max_size=5),
    st.lists(
        st.tuples(st.integers(1, 3), st.integers(1, 4), st.integers(0, 8)),
        min_size=1,
        max_size=6,
    ),
    st.lists(_op, min_size=1, max_size=25),
)
def test_scratch_always_shows_the_requested_window(running, reserved, ops):
    # Both ways of moving items: counting holders (Rv1Pool-based pools) and
    # the pool's own register_alloc and free with repairs (any other).
    for counting in (True, False):
        Scratch.count_holders = counting
        try:
            _check_scratch_windows(running, reserved, ops)
        finally:
            Scratch.count_holders = True


def _check_scratch_windows(running, reserved, ops):
    pool, planner = make_planner(nodes=4, cores=4)
    jobid = 1
    for nodes, tens in running:
        rr = request(pool, nodes=nodes, slots=nodes, cores=2, duration=50.0 * tens)
        planner.start_now(jobid, rr, ignore_reservations=True)
        jobid += 1
    for nodes, tens, at in reserved:
        rr = request(pool, nodes=nodes, slots=nodes, cores=2, duration=50.0 * tens)
        found = planner.earliest(jobid, rr, floor=NOW + 50.0 * at)
        if found is not None:
            planner.reserve(jobid, found[0], found[0] + rr.duration, found[1])
        jobid += 1
    for kind, step, tens, which in ops:
        ids = sorted(planner.reservations)
        if kind == "drop" and ids:
            planner.drop(ids[which % len(ids)])
            continue
        if kind == "start":
            rr = request(pool, nodes=1, cores=1, duration=50.0 * tens)
            planner.start_now(jobid, rr)
            jobid += 1
            continue
        t = NOW + 50.0 * step
        tend = t + 50.0 * tens
        excluded = ids[which % len(ids)] if ids and which else None

        def considered(item, excluded=excluded):
            return item.jobid != excluded

        scratch = planner._scratch()
        scratch.goto(t, tend, considered)
        assert scratch_allocated(scratch) == {
            r: c
            for r, c in expected_allocated(planner, t, tend, considered).items()
            if c
        }
    # The real pool holds exactly the running jobs.
    real = {
        rank: set(info["allocated_cores"])
        for rank, info in pool.impl._ranks.items()
        if info["allocated_cores"]
    }
    assert real == {
        r: c
        for r, c in expected_allocated(planner, NOW, NOW, lambda item: False).items()
        if c
    }


def test_a_scratch_copy_follows_passes_and_frees():
    """The copy outlives a pass: at the next one's now it still shows a
    job past its planned end (it holds its cores until it is freed), then
    follows the free, a partial one first."""
    pool, planner = make_planner(nodes=4, cores=4)
    run(planner, pool, 1, nodes=2, slots=2, cores=4, duration=50.0)
    run(planner, pool, 2, nodes=1, slots=1, cores=2, duration=500.0)
    scratch = planner._scratch()
    scratch.goto(NOW, NOW + 100.0, lambda item: True)
    later = NOW + 100.0  # job 1 is overdue: still running

    def shown(t):
        scratch.goto(t, t + 100.0, lambda item: True)
        return scratch_allocated(scratch)

    def busy(t):
        return {
            r: c
            for r, c in expected_allocated(
                planner, t, t + 100.0, lambda i: True
            ).items()
            if c
        }

    planner.begin_pass(later)
    assert planner._scratch() is scratch
    assert shown(later) == busy(later) and len(shown(later)) == 3
    # A partial free of one of job 1's ranks, then the rest.
    item = planner.running[1]
    first, second = sorted(item.ranks)
    part = item.R.copy()
    part.remove_ranks(IDset([second]))
    planner.release(1, part, final=False, now=later)
    assert planner._scratch() is scratch
    assert shown(later) == busy(later) and first not in shown(later)
    planner.release(1, now=later)
    assert shown(later) == busy(later)
    assert len(shown(later)) == 1


@pytest.mark.parametrize("counting", [True, False])
def test_a_scratch_copy_follows_an_allocation_handed_to_another_job(
    monkeypatch, counting
):
    """``transfer`` gives a job's fresh allocation to an identical job: a
    copy that counts holders keeps showing the cores, held until the same
    end, now by the other job (and is not made again); any other copy is
    dropped."""
    monkeypatch.setattr(Scratch, "count_holders", counting)
    pool, planner = make_planner(nodes=2, cores=4)
    run(planner, pool, 1, nodes=1, slots=1, cores=2, duration=50.0)
    scratch = planner._scratch()
    scratch.goto(NOW + 60.0, NOW + 160.0, lambda item: True)
    R = run(planner, pool, 2, slots=1, cores=3, duration=300.0)
    planner.transfer(2, 3)
    assert 2 not in planner.running and planner.running[3].R is R
    assert planner.running[3].end == NOW + 300.0
    if not counting:
        assert planner.scratch is None
        return
    assert planner._scratch() is scratch
    for t in (NOW, NOW + 60.0, NOW + 400.0):
        scratch.goto(t, t + 100.0, lambda item: True)
        assert scratch_allocated(scratch) == {
            r: c
            for r, c in expected_allocated(
                planner, t, t + 100.0, lambda item: True
            ).items()
            if c
        }
    # Freed under its new owner, it leaves the copy.
    planner.release(3, now=NOW + 10.0)
    scratch.goto(NOW + 10.0, NOW + 110.0, lambda item: True)
    assert ranks_of(R).isdisjoint(scratch_allocated(scratch))


@pytest.mark.parametrize("counting", [True, False])
def test_a_scratch_copy_hides_ranks_from_its_allocator_and_shows_them_again(counting):
    """``Scratch.set_up`` marks ranks down and up in the copy as the
    pool's ``mark_down`` and ``mark_up`` do (flags set directly on a
    counted copy, an idset otherwise): the allocator leaves them out, then
    uses them again, and the real pool never changes."""
    Scratch.count_holders = counting
    try:
        pool, planner = make_planner(nodes=4, cores=4)
        run(planner, pool, 1, slots=1, cores=2, duration=500.0)  # on rank 0
        scratch = planner._scratch()
        scratch.goto(NOW, NOW + 100.0, lambda item: True)
        rr = request(pool, slots=1, cores=4, duration=100.0)
        before = pool.to_dict()
        assert ranks_of(scratch.alloc(2, rr)) == {1}
        scratch.unalloc(2)
        scratch.set_up([1, 2], False)
        assert ranks_of(scratch.alloc(2, rr)) == {3}
        scratch.unalloc(2)
        scratch.set_up([1, 2, 3], False)
        with pytest.raises(InsufficientResources):
            scratch.alloc(2, rr)
        scratch.set_up([1, 2, 3], True)
        assert ranks_of(scratch.alloc(2, rr)) == {1}
        scratch.unalloc(2)
        assert pool.to_dict() == before
    finally:
        Scratch.count_holders = True


@pytest.mark.parametrize("level, kept", [(syslog.LOG_DEBUG, 1), (syslog.LOG_INFO, 0)])
def test_an_R_chosen_on_a_copy_is_logged_only_when_the_level_keeps_it(level, kept):
    """Starting a job around a reservation commits the copy's R to the
    pool; its debug line (job id and R) is formatted only when kept."""
    pool, planner = make_planner(nodes=3, cores=4, pool_class=Pool)
    run(planner, pool, 1, slots=1, cores=4, duration=100.0)
    held = request(pool, slots=1, cores=4, duration=100.0)
    found = planner.earliest(2, held, floor=NOW + 50.0)
    planner.reserve(2, found[0], found[0] + 100.0, found[1])
    log = planner.log = ThresholdLog(level)
    probes = planner.probes
    with mock.patch.object(
        Rv1SummaryPool, "dumps", autospec=True, side_effect=Rv1SummaryPool.dumps
    ) as dumps:
        # Two slots: not one the plan places by itself (one slot of cores).
        R = planner.start_now(3, request(pool, slots=2, cores=1, duration=100.0))
    assert R is not None and planner.probes == probes + 1  # chosen on the copy
    assert [line.split(":")[0] for line in log.lines] == ["alloc"] * kept
    assert dumps.call_count == kept


def test_one_slot_started_around_a_reservation_takes_the_pools_choice_unasked():
    """One slot of cores starting now around a reservation gets the cores
    the allocator would give it on the copy (the roomiest rank over its
    window, the first of those), read from the plan: the copy is not
    asked (``check_one_rank`` asks it as well and compares)."""
    pool, planner = make_planner(nodes=3, cores=4, pool_class=Pool)
    run(planner, pool, 1, slots=1, cores=3, duration=1000.0)  # rank 0: 1 core left
    held = request(pool, slots=1, cores=2, duration=100.0)
    found = planner.earliest(2, held, floor=NOW + 50.0)
    assert ranks_of(found[1]) == {1}
    planner.reserve(2, found[0], found[0] + 100.0, found[1])
    planner.check_one_rank = True
    probes = planner.probes
    # Rank 1 has 2 cores over the window, rank 2 all 4: rank 2.
    R = planner.start_now(3, request(pool, slots=1, cores=2, duration=100.0))
    assert ranks_of(R) == {2} and planner.probes == probes
    # Rank 1 and rank 2 now tie at 2 cores: the first, rank 1, and not the
    # reserved cores.
    R = planner.start_now(4, request(pool, slots=1, cores=2, duration=100.0))
    assert ranks_of(R) == {1} and planner.probes == probes
    assert not parse_ranks(R)[1][0] & parse_ranks(found[1])[1][0]
    R = planner.start_now(5, request(pool, slots=1, cores=2, duration=100.0))
    assert ranks_of(R) == {2} and planner.probes == probes
    # Nothing is left for a fourth over the window.
    assert planner.start_now(6, request(pool, slots=1, cores=2, duration=100.0)) is None
