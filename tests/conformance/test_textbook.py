"""The textbook model of FIFO, EASY and conservative backfilling."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.policy import textbook as tb
from conformance.policy.textbook import Queued, Running, WorkloadJob


def q(key, nodes, limit):
    return Queued(key, nodes, limit)


# -- FIFO ------------------------------------------------------------------------


def test_fifo_starts_from_the_head_while_jobs_fit():
    running = [Running(2, 100)]
    queue = [q("a", 1, 10), q("b", 1, 10), q("c", 2, 10), q("d", 1, 10)]
    assert tb.fifo_starts(0, 4, running, queue) == ["a", "b"]
    # c does not fit: d waits behind it although it would fit.
    after = running + [Running(1, 10), Running(1, 10)]
    assert tb.starts("fifo", 0, 5, after, queue[2:]) == []


# -- EASY ------------------------------------------------------------------------


def test_easy_backfills_a_job_that_ends_by_the_shadow_time():
    running = [Running(2, 100)]
    queue = [q("head", 4, 100), q("short", 1, 50), q("long", 1, 200)]
    assert tb.plan(0, 4, running, queue, depth=1) == {"head": 100, "short": 0}
    assert tb.backfill_starts(0, 4, running, queue) == ["short"]


def test_easy_backfills_a_long_job_on_the_extra_nodes_only_once():
    # The head needs 3 of 4 nodes at the shadow time 100: one node is extra.
    running = [Running(2, 100)]
    queue = [q("head", 3, 100), q("first", 1, 1000), q("second", 1, 1000)]
    assert tb.starts("easy", 0, 4, running, queue) == ["first"]


def test_easy_gives_one_reservation_only():
    running = [Running(4, 100)]
    queue = [q("head", 4, 10), q("next", 4, 10), q("small", 1, 50)]
    assert tb.plan(0, 4, running, queue, depth=1) == {"head": 100}


def test_jobs_larger_than_the_machine_are_skipped():
    queue = [q("huge", 5, 10), q("a", 4, 10)]
    assert tb.starts("easy", 0, 4, [], queue) == ["a"]
    assert tb.reservations(0, 4, [], queue) == {"a": 0}


def test_a_limit_of_zero_is_no_limit():
    running = [Running(2, math.inf)]
    queue = [q("whole", 4, 10), q("forever", 2, 0)]
    assert tb.plan(0, 4, running, queue, depth=None) == {"forever": 0}
    assert tb.earliest_start(0, 4, [Running(2, 50)], 4, 0) == 50


# -- conservative ------------------------------------------------------------------


def _early_end_case():
    """4 nodes: r1 (2 nodes, expected end 100) ends early at 30, r2 (2 nodes)
    ends at 50; A needs 4 nodes for 100 s, B 2 nodes for 50 s."""
    queue = [q("A", 4, 100), q("B", 2, 50)]
    before = tb.reservations(0, 4, [Running(2, 100), Running(2, 50)], queue)
    return queue, before


def test_conservative_reserves_every_job_in_queue_order():
    _, before = _early_end_case()
    # B fits in the hole before A's reservation.
    assert before == {"A": 100, "B": 50}


def test_compression_never_moves_a_reservation_later():
    queue, before = _early_end_case()
    after = tb.reservations(30, 4, [Running(2, 50)], queue, held=before)
    assert after == {"A": 100, "B": 30}
    assert tb.starts("conservative", 30, 4, [Running(2, 50)], queue, before) == ["B"]


def test_placing_afresh_can_move_a_reservation_later():
    # Without the reservations held, A is placed first at 50 and B goes
    # past its first reservation: why conservative needs *held*.
    queue, _ = _early_end_case()
    assert tb.reservations(30, 4, [Running(2, 50)], queue) == {"A": 50, "B": 150}


def test_times_within_the_resolution_are_one_time():
    # A reservation computed as 1758.966 + 13981.776 and the clock's
    # 15740.742000102997 are the same instant: the job fits exactly.
    held = {"a": 1758.966 + 13981.776, "b": 1758.966 + 13981.776 + 456.479}
    queue = [q("a", 32, 456.479), q("b", 4, 100)]
    now = 15740.742000102997
    assert tb.starts("conservative", now, 32, [], queue, held) == ["a"]
    assert tb.reservations(now, 32, [], queue, held)["b"] == held["b"]


def test_simulate_conservative_keeps_its_reservations():
    jobs = [
        WorkloadJob("r1", 0.0, 2, 100, 30),
        WorkloadJob("r2", 0.5, 2, 49.5, 49.5),
        WorkloadJob("A", 1.0, 4, 100, 100),
        WorkloadJob("B", 2.0, 2, 48, 48),
    ]
    assert tb.simulate("conservative", 4, jobs) == {
        "r1": 0.0,
        "r2": 0.5,
        "A": 78.0,  # compressed to B's end; B went first, on r1's nodes
        "B": 30.0,
    }
    assert tb.simulate("easy", 4, jobs)["A"] == 50.0


# -- properties --------------------------------------------------------------------

sizes = st.integers(1, 6)
limits = st.integers(1, 40).map(float)


@st.composite
def states(draw):
    running = draw(st.lists(st.tuples(sizes, limits), max_size=4))
    total = max(6, sum(n for n, _ in running))
    queue = draw(st.lists(st.tuples(sizes, limits), min_size=1, max_size=8))
    return (
        total,
        [Running(n, e) for n, e in running],
        [q(i, n, lim) for i, (n, lim) in enumerate(queue)],
    )


def _free(total, running, placed, t):
    busy = sum(r.nodes for r in running if t < r.end)
    busy += sum(n for s, n, lim in placed if s <= t < s + lim)
    return total - busy


def _naive_earliest(total, running, placed, nodes, limit):
    candidates = {0.0} | {r.end for r in running}
    candidates = sorted(candidates | {t for s, _, lim in placed for t in (s, s + lim)})
    for start in candidates:
        checks = [start] + [c for c in candidates if start < c < start + limit]
        if all(_free(total, running, placed, c) >= nodes for c in checks):
            return start
    return None


@settings(max_examples=150, deadline=None)
@given(states(), st.sampled_from([1, 2, None]))
def test_plan_agrees_with_a_naive_placement(state, depth):
    total, running, queue = state
    planned = tb.plan(0.0, total, running, queue, depth=depth)
    placed, reserved = [], 0
    for job in queue:
        start = _naive_earliest(total, running, placed, job.nodes, job.limit)
        if start is None or (start > 0 and depth is not None and reserved >= depth):
            assert job.key not in planned
            continue
        reserved += start > 0
        placed.append((start, job.nodes, job.limit))
        assert planned.get(job.key) == start, job


def _replay(policy, total, jobs):
    """Replay like :func:`textbook.simulate`, recording each job's first
    reservation and checking capacity at every instant."""
    pending, queue, running, held = sorted(jobs, key=lambda j: j.submit), [], {}, {}
    first, started = {}, {}
    while pending or queue:
        ends = [s + j.runtime for j, s in running.values()]
        now = min(ends + ([pending[0].submit] if pending else []))
        running = {k: (j, s) for k, (j, s) in running.items() if s + j.runtime > now}
        while pending and pending[0].submit <= now:
            queue.append(pending.pop(0))
        run = [Running(j.nodes, s + j.limit) for j, s in running.values()]
        wait = [q(j.key, j.nodes, j.limit) for j in queue]
        depth = 1 if policy == "easy" else None
        planned = tb.plan(now, total, run, wait, depth, held)
        held = {k: s for k, s in planned.items() if s > now}
        for k, s in held.items():
            first.setdefault(k, s)
        for j in queue:
            if planned.get(j.key) == now:
                running[j.key], started[j.key] = (j, now), now
        queue = [j for j in queue if j.key not in started]
        assert sum(j.nodes for j, _ in running.values()) <= total
    return first, started


workloads = st.lists(
    st.tuples(st.integers(0, 50), sizes, limits, st.floats(0.1, 1.0)),
    min_size=1,
    max_size=14,
)


@settings(max_examples=150, deadline=None)
@given(workloads, st.sampled_from(["easy", "conservative"]))
def test_no_job_starts_later_than_its_first_reservation(raw, policy):
    jobs = [
        WorkloadJob(i, t + i / 1000, n, lim, round(lim * f, 3))
        for i, (t, n, lim, f) in enumerate(raw)
    ]
    first, started = _replay(policy, 6, jobs)
    assert started == tb.simulate(policy, 6, jobs)
    # EASY's one reservation is the head's, which stays the head until it
    # starts; conservative's are every job's.
    for key, reservation in first.items():
        assert started[key] <= reservation + tb.RESOLUTION, key
