"""The planner on a real Rv1Pool: earliest starts, both EASY clauses,
reservation checks, kept free stretches and the one-rank search (the
scratch copies are tested in test_scratch_copy.py)."""

from __future__ import annotations

import itertools
import math

import pytest
from flux.idset import IDset
from flux.resource import InsufficientResources, ResourcePool
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from planner_helpers import (  # noqa: F401 (frozen_time: an autouse fixture)
    INF,
    NOW,
    frozen_time,
    make_planner,
    ranks_of,
    request,
    run,
)

from flux_sched_base.planner import Planner
from flux_sched_base.pool import Pool, Rv1SummaryPool, VersionedPool, lowest_free


def test_start_now_stamps_R_and_records_the_end():
    pool, planner = make_planner()
    R = run(planner, pool, 1, nodes=2, slots=2, duration=100.0)
    execution = R.to_dict()["execution"]
    assert (execution["starttime"], execution["expiration"]) == (NOW, NOW + 100.0)
    assert planner.running[1].end == NOW + 100.0
    assert dict(pool.job_end_times())[1] == NOW + 100.0


def test_earliest_waits_for_running_jobs_to_end():
    pool, planner = make_planner()
    run(planner, pool, 1, nodes=2, slots=2, duration=100.0)
    run(planner, pool, 2, nodes=1, slots=1, duration=300.0)
    t, R = planner.earliest(3, request(pool, nodes=3, slots=3), floor=NOW)
    assert t == NOW + 100.0
    assert (
        planner.earliest(4, request(pool, nodes=4, slots=4), floor=NOW)[0]
        == NOW + 300.0
    )


def test_both_easy_clauses_and_the_reservation_they_protect():
    pool, planner = make_planner()
    run(planner, pool, 1, nodes=2, slots=2, duration=100.0)
    head = request(pool, nodes=3, slots=3)
    t, R = planner.earliest(10, head, floor=NOW, include_floor=False)
    planner.reserve(10, t, t + 100.0, R)
    spare = ({0, 1, 2, 3} - ranks_of(R)).pop()
    # Clause 1: ends before the reservation starts: anywhere.
    assert planner.start_now(11, request(pool, nodes=1, duration=100.0)) is not None
    # Clause 2: runs past it: only on the node the reservation leaves.
    R12 = planner.start_now(12, request(pool, nodes=1, duration=1000.0))
    assert R12 is not None and ranks_of(R12) == {spare}
    assert planner.start_now(13, request(pool, nodes=1, duration=1000.0)) is None
    assert planner.is_valid(planner.reservations[10])


def test_start_reserved_uses_the_reserved_R():
    pool, planner = make_planner()
    t, R = planner.earliest(5, request(pool, nodes=2, slots=2), floor=NOW)
    assert t == NOW
    planner.reserve(5, NOW, NOW + 100.0, R)
    started = planner.start_reserved(5, 100.0)
    assert started is R
    assert 5 in planner.running and 5 not in planner.reservations


def test_invalid_when_a_running_job_is_extended_or_a_rank_goes_down():
    pool, planner = make_planner()
    run(planner, pool, 1, nodes=4, slots=4, duration=100.0)
    t, R = planner.earliest(2, request(pool, nodes=4, slots=4), floor=NOW)
    res = planner.reserve(2, t, t + 100.0, R)
    assert planner.is_valid(res)
    planner.set_expiration(1, NOW + 150.0)
    assert not planner.is_valid(res)
    planner.set_expiration(1, NOW + 100.0)
    assert planner.is_valid(res)
    pool.mark_down("3")
    planner.refresh_resources()
    assert not planner.is_valid(res)


def test_lightening_is_logged_by_rank():
    pool, planner = make_planner()
    run(planner, pool, 1, nodes=1, duration=100.0)
    epoch = planner.lighten_epoch
    planner.release(1, final=True, now=NOW + 10.0)  # before its end
    assert planner.lighten_epoch == epoch + 1
    assert planner.lightened_since(epoch) == set(planner.node_cores) & {0}


@pytest.mark.parametrize("one_rank", [True, False])
def test_earliest_skips_a_window_whose_cores_are_taken_in_turn(one_rank, monkeypatch):
    """Cores 1-3 are busy until 50 and 100, then a reservation takes cores
    0-2: a core is free at every instant of ``[t, t + 200)`` from now or
    from 50, but no core for all of it.  Searching rank by rank (a one-slot
    request), the planner asks the allocator only at 100; the general
    search asks once, learns the ranks' state, and asks again only at
    100."""
    if not one_rank:
        monkeypatch.setattr(Planner, "_one_rank_shape", lambda self, request: None)
    pool, planner = make_planner(nodes=1, cores=4)
    run(planner, pool, 1, slots=1, cores=1, duration=100.0)  # core 0
    run(planner, pool, 2, slots=1, cores=1, duration=50.0)  # core 1
    run(planner, pool, 3, slots=1, cores=2, duration=100.0)  # cores 2-3
    pool.free(1)
    planner.release(1, now=NOW)
    three = request(pool, slots=1, cores=3, duration=1000.0)
    t, R = planner.earliest(4, three, floor=NOW)
    planner.reserve(4, t, t + 1000.0, R)
    assert t == NOW + 100.0 and planner.reservations[4].ranks[0][0] == {0, 1, 2}
    one = request(pool, slots=1, cores=1, duration=200.0)
    need = planner.need(one)
    assert list(planner.profile.candidates(NOW, 200.0, need))[:3] == [
        NOW,
        NOW + 50.0,
        NOW + 100.0,
    ]
    probes = planner.probes
    assert planner.earliest(5, one, floor=NOW)[0] == NOW + 100.0
    # The general search is refused now and not asked at 50.
    assert planner.probes - probes == (1 if one_rank else 2)


def test_ranks_with_room_before_a_limit_leave_the_jobs_own_reservation_out():
    """Rank 0 is busy until 300, rank 1 until 100 and then reserved for
    job 5 from 150: a 50 s window starting before 200 fits on rank 1
    alone (from 100), none before 100; a 200 s one before 150 on neither,
    except for job 5 on rank 1 (its own reservation left out); rank 0
    takes it from 300."""
    pool, planner = make_planner(nodes=2, cores=4)
    run(planner, pool, 1, nodes=1, slots=1, cores=4, duration=300.0)
    run(planner, pool, 2, nodes=1, slots=1, cores=4, duration=100.0)
    assert [set(planner.running[j].ranks) for j in (1, 2)] == [{0}, {1}]
    whole = request(pool, nodes=1, cores=4, duration=100.0)
    t, R = planner.earliest(5, whole, floor=NOW + 150.0)
    planner.reserve(5, t, t + 100.0, R)
    assert t == NOW + 150.0 and ranks_of(R) == {1}
    one = request(pool, slots=1, cores=1, duration=50.0)
    longer = request(pool, slots=1, cores=1, duration=200.0)
    up = planner.up
    assert planner.ranks_with_room(6, one, up, NOW, NOW + 200.0) == {1}
    assert planner.ranks_with_room(6, one, up, NOW, NOW + 100.0) == set()
    assert planner.ranks_with_room(6, longer, up, NOW, NOW + 150.0) == set()
    assert planner.ranks_with_room(5, longer, up, NOW, NOW + 150.0) == {1}
    assert planner.ranks_with_room(6, longer, {0}, NOW, NOW + 301.0) == {0}
    constrained = request(pool, slots=1, cores=1, constraints={"ranks": ["1"]})
    assert planner.ranks_with_room(6, constrained, up, NOW, INF) is None


def test_a_hello_holding_a_core_the_rank_does_not_list_leaves_its_own_free():
    """A restart's hello may give a running job a core beyond its rank's
    own (core 4 of a 4-core node): the rank's four cores are all its own
    to hand out, so three of them are free now beside the job on core 0,
    while the other node has two.  Counting that core as one of the
    rank's would put the earliest start at 100."""
    pool, planner = make_planner(nodes=2, cores=4)
    run(planner, pool, 1, slots=1, cores=1, duration=100.0)
    run(planner, pool, 2, slots=1, cores=2, duration=1000.0)
    assert [planner.running[j].ranks.keys() for j in (1, 2)] == [{0}, {1}]
    held = ResourcePool(
        {
            "version": 1,
            "execution": {
                "R_lite": [{"rank": "0", "children": {"core": "4"}}],
                "starttime": 0.0,
                "expiration": NOW + 500.0,
            },
        }
    )
    pool.register_alloc(3, held)
    planner.add_running(3, held, held.expiration)
    planner.invalidate()
    three = request(pool, slots=1, cores=3, duration=50.0)
    t, R = planner.earliest(4, three, floor=NOW)
    assert t == NOW and ranks_of(R) == {0}


def test_rank_bounds_follow_running_jobs_as_they_come_go_and_move():
    """The kept per-rank times at which running jobs leave room for a
    share equal a fresh reading after every change."""
    pool, planner = make_planner(nodes=3, cores=4, gpus=1)

    def fresh(cores, gpus):
        found = [(planner.rank_bound(r, cores, gpus), r) for r in sorted(planner.up)]
        return sorted((b, r) for b, r in found if b != INF)

    shares = [(1, 0), (3, 0), (2, 1), (None, 0)]
    for share in shares:
        assert list(planner.rank_bounds(*share)[0]) == fresh(*share)
    changes = [
        lambda: run(planner, pool, 1, slots=1, cores=2, duration=100.0),
        lambda: run(planner, pool, 2, slots=1, cores=3, duration=300.0, gpus=1),
        lambda: run(planner, pool, 3, slots=1, cores=1, duration=50.0),
        lambda: planner.set_expiration(2, NOW + 40.0),
        lambda: (pool.free(1), planner.release(1, now=NOW)),
        lambda: run(planner, pool, 4, nodes=1, slots=1, cores=4, duration=70.0),
        lambda: (pool.free(3), planner.release(3, now=NOW)),
    ]
    for change in changes:
        change()
        for share in shares:
            bounds, unknown = planner.rank_bounds(*share)
            assert list(bounds) == fresh(*share) and not unknown
    # Rank 2 is empty again, rank 1's GPU job ends at 40 (moved from 300),
    # rank 0's whole-node job at 70.
    assert list(planner.rank_bounds(2, 1)[0]) == [
        (-INF, 2),
        (NOW + 40.0, 1),
        (NOW + 70.0, 0),
    ]


def test_starts_counts_ranks_free_for_the_whole_window():
    pool, planner = make_planner()
    # Reservations take every node in turn for 100 s: at each instant three
    # nodes are free, but no node is free for 350 s before rank 0 is, at 100.
    for i, rank in enumerate(range(4)):
        rr = request(pool, nodes=1, duration=100.0, constraints={"ranks": [str(rank)]})
        t, R = planner.earliest(20 + i, rr, floor=NOW + 100.0 * i)
        planner.reserve(20 + i, t, t + 100.0, R)
    long = request(pool, nodes=1, duration=350.0)
    assert list(planner.profile.candidates(NOW, 350.0, planner.need(long)))[0] == NOW
    starts = planner.starts(30, long, floor=NOW)
    assert starts == [(NOW + 100.0, INF)]
    assert planner.earliest(30, long, floor=NOW)[0] == NOW + 100.0


# -- kept free stretches against a fresh reading ----------------------------------


def fresh_starts(planner, jobid, rr, **kw):
    """:meth:`Planner.starts` with nothing kept: every rank read afresh."""
    kept, planner._stretches = planner._stretches, {}
    try:
        return planner.starts(jobid, rr, **kw)
    finally:
        planner._stretches = kept


_change = st.tuples(
    st.sampled_from(
        ["start", "reserve", "drop", "end", "partial", "extend", "down", "ask"]
    ),
    st.integers(0, 8),  # time step x 50 s
    st.integers(1, 6),  # duration x 50 s / cores
    st.integers(0, 7),  # which item / rank
)


@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.lists(_change, min_size=1, max_size=30))
def test_kept_free_stretches_answer_as_a_fresh_reading(changes):
    """Whatever changes the plan (jobs start, end, end in part or move
    their end; reservations come and go; ranks go down), the start times
    :meth:`Planner.starts` finds with stretches kept from earlier questions
    equal those of a fresh reading, for every view (own reservation left
    out, held ones left out)."""
    pool, planner = make_planner(nodes=4, cores=4)
    jobid = 1
    asked = 0
    for kind, step, size, which in changes:
        t = NOW + 50.0 * step
        running = sorted(planner.running)
        reserved = sorted(planner.reservations)
        if kind == "start":
            rr = request(pool, slots=1, cores=1 + size % 4, duration=50.0 * size)
            planner.start_now(jobid, rr, ignore_reservations=True)
            jobid += 1
        elif kind == "reserve":
            rr = request(pool, nodes=1 + size % 2, slots=1 + size % 2, cores=2)
            found = planner.earliest(jobid, rr, floor=t)
            if found is not None:
                planner.reserve(jobid, found[0], found[0] + 50.0 * size, found[1])
            jobid += 1
        elif kind == "drop" and reserved:
            planner.drop(reserved[which % len(reserved)])
        elif kind == "end" and running:
            planner.release(running[which % len(running)], now=NOW)
        elif kind == "partial" and running:
            item = planner.running[running[which % len(running)]]
            if len(item.ranks) > 1:
                R = item.R.copy()
                R.remove_ranks(IDset(sorted(item.ranks)[1:]))
                planner.release(item.jobid, R, final=False, now=NOW)
        elif kind == "extend" and running:
            planner.set_expiration(running[which % len(running)], t + 50.0 * size)
        elif kind == "down":
            rank = str(which % 4)
            if which % 4 in planner.up:
                pool.mark_down(rank)
            else:
                pool.mark_up(rank)
            planner.refresh_resources()
        elif kind == "ask":
            planner.begin_pass(NOW)
            if reserved:
                planner.settle(reserved[0])
        for rr in (
            request(pool, slots=1, cores=1 + which % 4, duration=50.0 * size),
            request(pool, nodes=2, slots=2, cores=4, duration=50.0 * size),
        ):
            for own in (jobid, *reserved[:2]):
                for exclude_held in (False, True):
                    kw = {"floor": t, "exclude_held": exclude_held}
                    got = planner.starts(own, rr, **kw)
                    assert got == fresh_starts(planner, own, rr, **kw)
                    asked += 1
    assert asked


# -- earliest against a probe at every time a window can start ------------------


def probed_earliest(planner, jobid, rr, floor, exclude_held, include_floor=True):
    """The first time from *floor* (after it, without *include_floor*) at
    which the allocator, on a scratch copy showing that window, places
    *rr*: *floor* and every end in the plan after it are tried (a window
    can only start fitting there)."""
    times = {floor}
    times.update(item.end for item in planner.running.values())
    times.update(item.end for item in planner.reservations.values())
    if not include_floor:
        times.discard(floor)
    considered = planner._considered(jobid, exclude_held)
    for t in sorted(x for x in times if floor <= x < INF):
        scratch = planner._scratch()
        scratch.goto(t, planner.window_end(t, rr.duration), considered)
        try:
            R = scratch.alloc(jobid, rr)
        except InsufficientResources:
            continue
        scratch.unalloc(jobid)
        return t, ranks_of(R)
    return None


def late_rank_expected(planner, jobid, rr, t):
    """Where a one-rank reservation at *t* belongs (see
    ``Planner._late_ranks``): on a rank something leaves exactly at *t*
    if one of them can host it then (the set of them), else on the rank
    that got lighter last before *t* among those that can."""
    now = planner.now
    considered = planner._considered(jobid, False)
    since = dict.fromkeys(planner.up, now)
    items = list(planner.running.values())
    items += [r for r in planner.reservations.values() if considered(r)]
    for item in items:
        if now < item.end <= t:
            for rank in item.ranks:
                if rank in since:
                    since[rank] = max(since[rank], item.end)
    hosts = probed_ranks(planner, jobid, rr, t, math.nextafter(t, INF))
    freed_at_t = {rank for rank in hosts if since[rank] == t}
    if freed_at_t:
        return freed_at_t
    return {max(hosts, key=lambda rank: (since[rank], rank))}


def probed_ranks(planner, jobid, rr, floor, limit):
    """The ranks on which, alone, the allocator places *rr* at a time in
    ``[floor, limit)`` (every other rank hidden from a scratch copy)."""
    considered = planner._considered(jobid, False)
    times = {floor}
    times.update(item.end for item in planner.running.values())
    times.update(item.end for item in planner.reservations.values())
    found = set()
    for rank in sorted(planner.up):
        others = planner.up - {rank}
        for t in sorted(x for x in times if floor <= x < limit):
            scratch = planner._scratch()
            scratch.goto(t, planner.window_end(t, rr.duration), considered)
            scratch.set_up(others, False)
            try:
                scratch.alloc(jobid, rr)
            except InsufficientResources:
                continue
            finally:
                scratch.set_up(others, True)
            scratch.unalloc(jobid)
            found.add(rank)
            break
    return found


@pytest.mark.parametrize("pool_class", [ResourcePool, Pool])
@settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    st.lists(
        st.tuples(st.integers(1, 4), st.integers(1, 8), st.booleans()),
        min_size=4,
        max_size=14,
    ),
    st.lists(
        st.tuples(st.integers(1, 4), st.integers(1, 6), st.integers(0, 6)),
        max_size=10,
    ),
    st.lists(
        st.tuples(st.integers(1, 4), st.integers(1, 8), st.integers(0, 6)),
        min_size=1,
        max_size=6,
    ),
    st.integers(0, 2),
)
def test_earliest_finds_the_first_time_the_allocator_accepts(
    pool_class, running, reserved, asked, late
):
    """One-slot jobs of 1-4 cores on four 4-core nodes leave cores free at
    every instant but not together over a window; the planner skips times
    rank by rank without asking the allocator, and must still answer as
    asking it at every time does.  On the reference schedulers' pool a
    reservation's late R is read from the plan where it can be: it must
    be the one the scratch copy's allocator gives (``check_one_rank``)."""
    pool, planner = make_planner(nodes=4, cores=4, pool_class=pool_class)
    jobid = 1
    # Jobs that end at once leave holes among the cores of those that run.
    ending = []
    for cores, tens, ends in running:
        rr = request(pool, slots=1, cores=cores, duration=50.0 * tens)
        if planner.start_now(jobid, rr, ignore_reservations=True) and ends:
            ending.append(jobid)
        jobid += 1
    for done in ending:
        pool.free(done)
        planner.release(done, now=NOW)
    for cores, tens, at in reserved:
        rr = request(pool, slots=1, cores=cores, duration=50.0 * tens)
        found = planner.earliest(jobid, rr, floor=NOW + 50.0 * at, prefer_late=True)
        if found is not None:
            planner.reserve(jobid, found[0], found[0] + rr.duration, found[1])
        jobid += 1
    held = sorted(planner.reservations)[: len(planner.reservations) // 2]
    # Later, some running jobs are past their planned end (overdue): they
    # still hold their cores now, not after.
    now = NOW + 50.0 * late
    planner.begin_pass(now)
    for settled in sorted(set(planner.reservations) - set(held)):
        planner.settle(settled)
    for (cores, tens, at), exclude_held, nodes in itertools.product(
        asked, (False, True), (None, 1, 2)
    ):
        rr = request(
            pool, nodes=nodes, slots=nodes or 1, cores=cores, duration=50.0 * tens
        )
        floor = now + 50.0 * at
        probes = planner.probes
        found = planner.earliest(jobid, rr, floor=floor, exclude_held=exclude_held)
        got = None if found is None else (found[0], ranks_of(found[1]))
        assert got == probed_earliest(planner, jobid, rr, floor, exclude_held)
        # Rank by rank the planner knows where each node's share fits:
        # after one refusal, the allocator is asked only where it accepts.
        assert planner.probes - probes <= 2
        if nodes != 2 and not exclude_held:
            # Which ranks could host it before a limit, as a compression
            # asks first, counts cores: never fewer ranks than the
            # allocator takes (more where a window has a free core at
            # every instant but no one core for all of it).
            limit = floor + 100.0
            room = planner.ranks_with_room(jobid, rr, planner.up, floor, limit)
            assert probed_ranks(planner, jobid, rr, floor, limit) <= room
            # A reservation after now goes where the others stay free
            # longest (the ranks freed last).
            planner.check_one_rank = True
            late = planner.earliest(jobid, rr, floor=floor, prefer_late=True)
            planner.check_one_rank = False
            if late is not None and late[0] > now:
                assert ranks_of(late[1]) <= late_rank_expected(
                    planner, jobid, rr, late[0]
                )
        jobid += 1
    # Every reservation settled (the plan free of conflicts, as at the back
    # of a pass): a job without one starts its search where the ranks'
    # stretches first have room, and must still find what asking the
    # allocator at every time finds.
    for settled in held:
        planner.settle(settled)
    for (cores, tens, at), include_floor in itertools.product(asked, (True, False)):
        rr = request(pool, slots=1, cores=cores, duration=50.0 * tens)
        floor = now + 50.0 * at
        found = planner.earliest(jobid, rr, floor=floor, include_floor=include_floor)
        got = None if found is None else (found[0], ranks_of(found[1]))
        assert got == probed_earliest(
            planner, jobid, rr, floor, False, include_floor=include_floor
        )
        jobid += 1


def test_a_late_R_read_from_the_plan_sees_what_the_pool_holds_for_no_job():
    """Cores the pool holds for no running job the planner knows (as a
    copy shows them, busy for ever) keep a freed rank from hosting a
    reservation: the late R is then not read from the plan's items."""
    pool, planner = make_planner(nodes=2, cores=4, pool_class=Pool)
    run(planner, pool, 1, slots=1, cores=2, duration=100.0)
    run(planner, pool, 2, slots=1, cores=4, duration=200.0)
    pool.alloc(99, request(pool, slots=1, cores=2))  # behind the planner's back
    planner.invalidate()
    found = planner.earliest(
        3, request(pool, slots=1, cores=3), floor=NOW, prefer_late=True
    )
    assert found[0] == NOW + 200.0
    assert ranks_of(found[1]) == ranks_of(planner.running[2].R)


def test_the_cheap_test_asks_the_ranks_of_a_one_rank_request():
    """Cores free now on two ranks add up for the counts, but a slot
    takes them on one: the cheap test says no, as the allocator would;
    and a rank with room now but a reservation later in the window does
    not count, though the counts leave room."""
    pool, planner = make_planner(nodes=2, cores=4)
    run(planner, pool, 1, slots=1, cores=2, duration=500.0)
    run(planner, pool, 2, slots=1, cores=2, duration=500.0)
    three = request(pool, slots=1, cores=3, duration=100.0)
    two = request(pool, slots=1, cores=2, duration=100.0)
    assert planner.profile.fits_from(NOW, 100.0, planner.need(three))
    assert not planner.fits_counts_now(three)
    assert planner.fits_counts_now(two)

    pool, planner = make_planner(nodes=2, cores=4)
    run(planner, pool, 1, slots=1, cores=3, duration=500.0)  # one free on it
    t, R = planner.earliest(3, three, floor=NOW + 50.0)  # the other rank
    assert t == NOW + 50.0 and ranks_of(R) != ranks_of(planner.running[1].R)
    planner.reserve(3, t, t + 100.0, R)
    assert planner.profile.fits_from(NOW, 100.0, planner.need(two))
    assert not planner.fits_counts_now(two)
    assert planner.fits_counts_now(request(pool, slots=1, cores=2, duration=50.0))


class _LastRankImpl(Rv1SummaryPool):
    """Puts one slot on the last rank with room (a placement of its own)."""

    def _one_slot(self, request, size):
        ranks = [
            rank
            for rank, info in self._ranks.items()
            if info["up"] and len(info["cores"] - info["allocated_cores"]) >= size
        ]
        if not ranks:
            raise InsufficientResources("insufficient resources")
        return [(ranks[-1], *lowest_free(self._ranks[ranks[-1]], size, 0))], 1


class _LastRankPool(VersionedPool):
    impl_classes = {1: _LastRankImpl}


def test_a_pool_placing_one_slot_its_own_way_gives_the_late_R_itself():
    """The late R is read from the plan only where the pool places one
    slot by the reference rule; a subclass with a rule of its own is
    asked."""
    pool, planner = make_planner(nodes=2, cores=4, pool_class=_LastRankPool)
    run(planner, pool, 1, slots=1, cores=4, duration=100.0)
    run(planner, pool, 2, slots=1, cores=4, duration=100.0)
    found = planner.earliest(
        3, request(pool, slots=1, cores=2), floor=NOW, prefer_late=True
    )
    assert found[0] == NOW + 100.0
    assert ranks_of(found[1]) == {1}  # the reference rule would take rank 0


def test_a_bare_start_now_asks_the_allocator_nothing():
    """A caller that starts the job itself when it fits now (a holder's
    compression) gets ``(now, None)`` without the allocator being asked;
    a later start still comes with its R."""
    pool, planner = make_planner(nodes=2, cores=4)
    run(planner, pool, 1, slots=1, cores=4, duration=100.0)
    probes = planner.probes
    fits = request(pool, slots=1, cores=3)
    assert planner.earliest(2, fits, floor=NOW, bare_now=True) == (NOW, None)
    assert planner.probes == probes
    found = planner.earliest(2, fits, floor=NOW)
    assert found[0] == NOW and ranks_of(found[1]) == {1}
    run(planner, pool, 3, slots=1, cores=2, duration=50.0)
    t, R = planner.earliest(4, fits, floor=NOW, bare_now=True)
    assert t == NOW + 50.0 and ranks_of(R) == {1}


def test_a_forecast_asked_again_at_one_time_sees_the_running_jobs_as_they_are():
    """The pool's one-slot choice at a time is read from the plan: asked
    again at that time, after a running job's planned end moved or the
    job ended early, it must see the change."""
    pool, planner = make_planner(nodes=4, cores=4, pool_class=Pool)
    later = NOW + 100.0
    for jobid, cores, duration in (
        (1, 1, 1000.0),  # rank 0, all free: the first
        (2, 4, 1000.0),  # rank 1
        (3, 4, 1000.0),  # rank 2
        (4, 2, 1000.0),  # rank 3
        (5, 3, 100.0),  # rank 0 again (three free): full until later
    ):
        run(planner, pool, jobid, slots=1, cores=cores, duration=duration)
    planner.check_one_rank = True  # every answer compared with the allocator's
    rr = request(pool, slots=1, cores=1, duration=50.0)
    found = planner.earliest(10, rr, floor=later)
    # Later, rank 0 has three cores free and rank 3 two.
    assert found[0] == later and ranks_of(found[1]) == {0}
    # Job 4 (two cores of rank 3) is now to end before then.
    planner.set_expiration(4, NOW + 50.0)
    found = planner.earliest(10, rr, floor=later)
    assert found[0] == later and ranks_of(found[1]) == {3}  # all four free then
    # Or it ends now.
    pool.free(4)
    planner.release(4, now=NOW)
    found = planner.earliest(10, rr, floor=later)
    assert found[0] == later and ranks_of(found[1]) == {3}
