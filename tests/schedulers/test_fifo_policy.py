"""Strict priority FIFO: the head blocks; estimates by forward planning."""

from __future__ import annotations

import pytest
from conftest import estimate_history, last_estimates, sched_annotations, start_broker
from conftest import whole_nodes as _nodes
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_easy_policy import run_batch, workloads

from mock_broker.jobspec import make_jobspec
from mock_broker.machine import Machine


def test_blocked_head_blocks_smaller_jobs_behind_it():
    b = start_broker("fifo", ["queue-depth=8"])
    b.jobs.submit(_nodes(2, 100), runtime=100)
    b.run_until_quiet()
    head = b.jobs.submit(_nodes(4, 100), runtime=100)
    small = b.jobs.submit(_nodes(1, 10), runtime=10)
    b.run_until_quiet()
    t0 = b.clock.epoch
    assert b.jobs.job(small).state == "SCHED"
    sched = b.jobs.job(head).annotations["sched"]
    assert sched == {"t_estimate": t0 + 100, "reason_pending": "insufficient resources"}
    sched = b.jobs.job(small).annotations["sched"]
    assert sched["t_estimate"] == t0 + 200
    assert sched["reason_pending"] == "waiting for higher priority jobs"
    b.run()
    assert b.jobs.job(head).t_run == t0 + 100
    assert b.jobs.job(small).t_run == t0 + 200
    assert b.jobs.job(small).annotations["sched"]["selection_type"] == "immediate"
    b.observer.assert_clean()


def test_estimates_respect_fifo_order_even_where_a_job_would_fit_earlier():
    b = start_broker("fifo")
    b.jobs.submit(_nodes(3, 100), runtime=100)
    b.run_until_quiet()
    head = b.jobs.submit(_nodes(2, 50), runtime=50)
    second = b.jobs.submit(_nodes(1, 10), runtime=10)
    b.run_until_quiet()
    t0 = b.clock.epoch
    # The second job fits on the idle node now, but FIFO keeps it behind
    # the head, which starts at 100.
    assert b.jobs.job(second).state == "SCHED"
    assert b.jobs.job(head).annotations["sched"]["t_estimate"] == t0 + 100
    assert b.jobs.job(second).annotations["sched"]["t_estimate"] == t0 + 100
    b.run()
    assert b.jobs.job(second).t_run == t0 + 100
    b.observer.assert_clean()


def test_forecast_depth_bounds_the_estimates():
    b = start_broker("fifo", ["forecast-depth=2"])
    b.jobs.submit(_nodes(4, 100), runtime=100)
    b.run_until_quiet()
    jobs = [b.jobs.submit(_nodes(4, 100), runtime=100) for _ in range(4)]
    b.run_until_quiet()
    estimated = [b.jobs.job(j).annotations is not None for j in jobs]
    assert estimated == [True, True, False, False]
    b.run()
    b.observer.assert_clean()


def test_forecast_depth_zero_disables_estimates():
    b = start_broker("fifo", ["forecast-depth=0"])
    b.jobs.submit(_nodes(4, 100), runtime=100)
    b.run_until_quiet()
    waiting = b.jobs.submit(_nodes(4, 100), runtime=100)
    b.run_until_quiet()
    assert b.jobs.job(waiting).annotations is None
    b.run()
    assert not any("t_estimate" in s for _, _, s, _ in sched_annotations(b))
    b.observer.assert_clean()


def test_job_without_time_limit_ends_the_chain_of_estimates():
    b = start_broker("fifo")
    b.jobs.submit(_nodes(4, 0), runtime=100)
    b.run_until_quiet()
    waiting = b.jobs.submit(_nodes(1, 10), runtime=10)
    b.run_until_quiet()
    sched = b.jobs.job(waiting).annotations["sched"]
    assert "t_estimate" not in sched
    assert sched["reason_pending"].startswith("insufficient resources")
    b.run()
    assert b.jobs.job(waiting).t_run == b.clock.epoch + 100
    b.observer.assert_clean()


# -- random workloads -----------------------------------------------------------

_submission = st.tuples(
    st.integers(0, 6),  # submit time, x10 s
    st.sampled_from([8, 16, 16, 24]),  # urgency
    st.sampled_from(
        [
            {"nodes": 1, "slots": 1, "cores": 4},
            {"nodes": 2, "slots": 2, "cores": 4},
            {"nodes": 4, "slots": 4, "cores": 4},
            {"slots": 3, "cores": 2},
            {"slots": 1, "cores": 1},
        ]
    ),
    st.integers(1, 6),  # duration, x10 s
    st.sampled_from([1.0, 0.5]),  # runtime fraction
)


@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.lists(_submission, min_size=2, max_size=12), st.sampled_from([8, 0]))
def test_no_job_starts_before_a_higher_priority_one(submissions, depth):
    args = [f"queue-depth={depth}"] if depth else ["queue-depth=unlimited"]
    b = start_broker("fifo", args)
    t0 = b.clock.epoch
    ids = []

    def submit(urgency, shape, tens, fraction):
        duration = 10.0 * tens
        ids.append(
            b.jobs.submit(
                make_jobspec(duration=duration, **shape),
                urgency=urgency,
                runtime=duration * fraction,
            )
        )

    for when, *rest in sorted(submissions, key=lambda s: s[0]):
        b.at(t0 + 10.0 * when, lambda r=rest: submit(*r))
    b.run()
    started = {
        jobid: seq for _, jobid, s, seq in sched_annotations(b) if "selection_type" in s
    }
    assert set(started) == set(ids)
    submitted = {
        e.text.split()[1]: e.seq
        for e in b.transcript.entries()
        if e.kind == "event" and e.text.startswith("submit ")
    }
    for a in ids:
        ja = b.jobs.job(a)
        for c in ids:
            jc = b.jobs.job(c)
            a_first = (-ja.priority, ja.id) < (-jc.priority, jc.id)
            if a_first and submitted[ja.f58] < started[c]:
                # a was waiting when c started: a must have started first.
                assert started[a] < started[c], (ja.f58, jc.f58)
    b.observer.assert_clean()


@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(workloads)
def test_estimates_are_exact_when_runtimes_equal_durations(jobs):
    b, ids = run_batch("fifo", jobs, exact=True, args=["forecast-depth=unlimited"])
    for jobid, values in estimate_history(b).items():
        estimates = {v for _, v in values if v is not None}
        assert estimates <= {b.jobs.job(jobid).t_run}
    for jobid, estimate in last_estimates(b).items():
        assert b.jobs.job(jobid).t_run == estimate
    b.observer.assert_clean()


def _slot(cores: int, duration: float) -> dict:
    """One slot of *cores* cores: fifo plans such jobs with the allocator."""
    return make_jobspec(slots=1, cores=cores, duration=duration)


def _count_placements(monkeypatch, path: str) -> list:
    """What the forecast places from now on: with *path* ``"planner"``
    (the sweep refused, so the planner's reservations), the job ids of
    the reservations placed; with ``"sweep"``, the requests the sweep
    places."""
    from flux_sched_base.one_slot_sweep import OneSlotSweep
    from flux_sched_base.planner import Planner

    placed: list = []
    if path == "planner":
        monkeypatch.setattr(OneSlotSweep, "takes", lambda self, request: False)
        reserve = Planner.reserve

        def counted(self, jobid, *args, **kwargs):
            placed.append(jobid)
            return reserve(self, jobid, *args, **kwargs)

        monkeypatch.setattr(Planner, "reserve", counted)
    else:
        place = OneSlotSweep.place

        def swept(self, request):
            placed.append(request)
            return place(self, request)

        monkeypatch.setattr(OneSlotSweep, "place", swept)
    return placed


@pytest.mark.parametrize("path", ["sweep", "planner"])
def test_a_forecast_planned_on_ranks_is_kept_while_nothing_ahead_changes(
    monkeypatch, path
):
    from flux_sched_base.scheduler import PlanningScheduler

    # Count the placements of the pass alone, without the tests' fresh
    # forecast that checks every kept one.
    monkeypatch.setattr(PlanningScheduler, "check_reuse", False)
    placed = _count_placements(monkeypatch, path)
    b = start_broker("fifo")
    for _ in range(4):
        b.jobs.submit(_slot(3, 100), runtime=100)  # one core left per node
    b.run_until_quiet()
    t0 = b.clock.epoch
    head = b.jobs.submit(_slot(2, 50), runtime=50)
    second = b.jobs.submit(_slot(3, 100), runtime=100)
    b.run_until_quiet()
    # A job arriving behind them is placed alone: the two estimates, and
    # the reservations they stand for, are kept.
    placed.clear()
    third = b.jobs.submit(_slot(2, 50), runtime=50)
    b.run_until_quiet()
    assert len(placed) == 1
    if path == "planner":
        assert placed == [third]
    estimates = last_estimates(b)
    assert estimates[head] == t0 + 100 and estimates[second] == t0 + 100
    assert estimates[third] == t0 + 100  # the node the head leaves half free
    # The head's priority rises: the planner drops its reservation and
    # places it again, at the same time, and the jobs behind it keep
    # theirs; the sweep, with the same jobs first, keeps all three.
    placed.clear()
    b.jobs.prioritize({head: 20})
    b.run_until_quiet()
    assert placed == ([head] if path == "planner" else [])
    assert last_estimates(b) == estimates
    b.run()
    assert [b.jobs.job(j).t_run for j in (head, second, third)] == [t0 + 100] * 3
    b.observer.assert_clean()


@pytest.mark.parametrize("check", [False, True])
def test_a_forecast_planned_on_ranks_is_kept_through_early_ends_it_cannot_use(
    monkeypatch, check
):
    from flux_sched_base.scheduler import PlanningScheduler

    # The planner's way (the sweep refused): with the checks off, the
    # placements are the pass's alone; with them on, every kept estimate
    # is compared with the earliest start.
    monkeypatch.setattr(PlanningScheduler, "check_reuse", check)
    placed = _count_placements(monkeypatch, "planner")
    b = start_broker("fifo")
    t0 = b.clock.epoch
    for limit in (100, 300, 300, 300):  # three cores on each node
        b.jobs.submit(_slot(3, limit), runtime=limit)
    b.run_until_quiet()
    b.jobs.submit(_slot(1, 200), runtime=20)  # node 0's last core
    b.jobs.submit(_slot(1, 300), runtime=10)  # node 1's
    for _ in range(2):
        b.jobs.submit(_slot(1, 300), runtime=300)
    b.run_until_quiet()
    head = b.jobs.submit(_slot(4, 50), runtime=50)
    second = b.jobs.submit(_slot(1, 50), runtime=50)
    b.run_until_quiet()
    assert last_estimates(b) == {head: t0 + 200, second: t0 + 250}
    # At 10 s a core of node 1 frees: the head needs a whole node, so it
    # keeps its reservation; the job behind it can now start with it, on
    # that core, and alone is placed again.
    placed.clear()
    b.run_until(t0 + 15)
    if not check:
        assert placed == [second]
    assert last_estimates(b) == {head: t0 + 200, second: t0 + 200}
    # At 20 s node 0 will be whole at 100 s: both move earlier.
    b.run_until(t0 + 25)
    assert last_estimates(b) == {head: t0 + 100, second: t0 + 100}
    b.run()
    assert [b.jobs.job(j).t_run for j in (head, second)] == [t0 + 100] * 2
    b.observer.assert_clean()


def test_a_job_that_falls_behind_a_kept_one_leaves_it_room():
    # With the tests' checks on, a kept estimate that is not the job's
    # earliest start fails the module.
    b = start_broker("fifo")
    t0 = b.clock.epoch
    for _ in range(4):
        b.jobs.submit(_slot(3, 100), runtime=100)  # one core left per node
    b.run_until_quiet()
    first = b.jobs.submit(_slot(2, 50), runtime=50)
    second = b.jobs.submit(_slot(2, 50), runtime=50)
    three_nodes = b.jobs.submit(
        make_jobspec(nodes=3, slots=3, cores=4, duration=50), runtime=50
    )
    b.run_until_quiet()
    # At 100 s the two small jobs take two cores on two nodes: three whole
    # nodes are free only once they end.
    assert last_estimates(b) == {
        first: t0 + 100,
        second: t0 + 100,
        three_nodes: t0 + 150,
    }
    # The second falls behind: the three nodes are free at 100 s next to
    # the first job alone, and the second fits on the first one's node.
    b.jobs.prioritize({second: 10})
    b.run_until_quiet()
    assert last_estimates(b) == {
        first: t0 + 100,
        three_nodes: t0 + 100,
        second: t0 + 100,
    }
    b.run()
    assert [b.jobs.job(j).t_run for j in (first, three_nodes, second)] == [t0 + 100] * 3
    b.observer.assert_clean()


_one_slot_job = st.tuples(
    st.sampled_from([0, 0, 0, 1, 5, 30]),  # seconds after the job before
    st.integers(1, 4),  # cores (machines of 2 to 4 cores a node)
    st.integers(1, 12),  # limit in tens of seconds
    st.sampled_from([1.0, 0.5, 0.2, 0.05]),  # runtime over the limit
    st.sampled_from([None, None, None, 20, 5]),  # a priority set later, if any
    st.sampled_from([0, 0, 0, 1]),  # GPUs (on a machine with GPU nodes)
    st.sampled_from([None] * 12 + ["drain", "undrain", "restart"]),  # then
)


def test_swept_estimates_are_the_planners_on_one_slot_queues():
    # With the tests' checks on, every sweep (fresh or continued) is
    # placed again by the planner, job by job from the start of the one
    # ahead, and a start or an R that differs fails the module.
    from flux_sched_base.one_slot_sweep import OneSlotSweep

    swept = []
    place = OneSlotSweep.place

    def counted(self, request):
        found = place(self, request)
        swept.append(found)
        return found

    @settings(
        max_examples=250,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(
        st.lists(_one_slot_job, min_size=3, max_size=30),
        st.integers(1, 4),
        st.integers(2, 4),
        st.sampled_from(["8", "unlimited", "2", "1", "0"]),
        st.sampled_from([None, "unlimited"]),
        st.sampled_from([0, 1, 2, 2]),
    )
    def examples(jobs, nodes, cores, depth, queue_depth, gpu_nodes):
        _run_one_slot_queue(jobs, nodes, cores, depth, queue_depth, gpu_nodes)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(OneSlotSweep, "place", counted)
        examples()
    # The sweep answered, and often (not only the planner's way).
    assert sum(found is not None for found in swept) > 500, len(swept)


def _run_one_slot_queue(jobs, nodes, cores, depth, queue_depth, gpu_nodes) -> None:
    """Submit *jobs* to fifo on *nodes* nodes of *cores* cores and, after
    them, *gpu_nodes* with two GPUs each (a job asking for a GPU too: it
    runs on those, and passes with it queued are the planner's); each job
    ends completed.  A node may be drained or undrained as a job is
    submitted (every node still drained is undrained after the last), or
    the scheduler restarted (the running jobs come back in its hello)."""
    from mock_broker.machine import Machine, NodeGroup

    args = [f"forecast-depth={depth}"]
    if queue_depth is not None:
        args.append(f"queue-depth={queue_depth}")
    groups = [NodeGroup(nodes, cores)]
    if gpu_nodes:
        groups.append(NodeGroup(gpu_nodes, cores, 2))
    b = start_broker("fifo", args, machine=Machine(tuple(groups)))
    t = b.clock.epoch
    later, ids = [], []
    drained = []
    for gap, size, tens, fraction, priority, gpus, event in jobs:
        t += gap
        b.run_until(t)
        limit = 10.0 * tens
        spec = _slot(min(size, cores), limit)
        if gpus and gpu_nodes:
            spec = make_jobspec(slots=1, cores=min(size, cores), gpus=1, duration=limit)
        jobid = b.jobs.submit(spec, runtime=limit * fraction)
        ids.append(jobid)
        if event == "drain":
            drained.append(str(jobid % (nodes + gpu_nodes)))
            b.resources.drain(drained[-1])
        elif event == "undrain" and drained:
            b.resources.undrain(drained.pop())
        elif event == "restart":
            b.restart_scheduler()
        if priority is not None:
            later.append((jobid, priority))
        if later and gap % 3 == 0:
            b.jobs.prioritize(dict([later.pop()]))
    for rank in drained:
        b.resources.undrain(rank)
    b.run()
    for jobid in ids:
        assert b.jobs.job(jobid).result == "completed"
    b.observer.assert_clean()


@pytest.mark.parametrize("cores", [3, 4], ids=["swept", "whole-nodes"])
def test_a_reused_estimate_left_standing_is_sent_once_it_no_longer_stands(
    monkeypatch, cores
):
    # The head's start moves 20 s earlier 9,960 s ahead (a job ends early
    # on the node it waits for): within 1% of the wait, so the t_estimate
    # sent is left standing.  A pass long after that reuses the forecast (an
    # arrival, nothing else changed) still sends the start once 20 s is
    # more than 1% of the wait left.  Three cores of four are placed by
    # the one-slot sweep, four (whole nodes) with node counts.
    from flux_sched_base.scheduler import PlanningScheduler

    monkeypatch.setattr(PlanningScheduler, "check_reuse", False)
    b = start_broker("fifo", machine=Machine.uniform(2, 4))
    t0 = b.clock.epoch
    b.jobs.submit(make_jobspec(slots=1, cores=4, duration=10_100.0))
    b.jobs.submit(make_jobspec(slots=1, cores=2, duration=10_060.0))
    b.jobs.submit(make_jobspec(slots=1, cores=2, duration=10_080.0), runtime=100.0)
    b.run_until_quiet()
    head = b.jobs.submit(make_jobspec(slots=1, cores=cores, duration=50.0))
    b.run_for(10.0)
    assert b.jobs.job(head).annotations["sched"]["t_estimate"] == t0 + 10_080.0
    b.run_for(200.0)  # the 2-core job ends early: the head's start is 10,060
    assert b.jobs.job(head).annotations["sched"]["t_estimate"] == t0 + 10_080.0
    b.run_for(8_800.0)
    b.jobs.submit(make_jobspec(slots=1, cores=cores, duration=50.0))
    b.run_for(1.0)
    assert b.jobs.job(head).annotations["sched"]["t_estimate"] == t0 + 10_060.0
