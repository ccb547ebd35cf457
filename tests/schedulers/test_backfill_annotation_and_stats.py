"""What an administrator and flux-core's tools read from a reference
scheduler: the ``backfill`` annotation on backfilled jobs (as flux-core's
``sched-backfill`` sets it) and the ``stats-get`` figures."""

from __future__ import annotations

import pytest
from conftest import POLICIES, start_broker
from conftest import whole_nodes as _nodes
from flux.job import JobID

from mock_broker.jobspec import make_jobspec
from mock_broker.machine import Machine


def _backfill_scene(policy: str):
    """4 nodes: a 2-node job runs until 100, a 4-node head waits, a short
    1-node job can backfill, an impossible job is denied."""
    b = start_broker(policy)
    running = b.jobs.submit(_nodes(2, 100), runtime=100)
    b.run_until_quiet()
    head = b.jobs.submit(_nodes(4, 100), runtime=100)
    short = b.jobs.submit(_nodes(1, 50), runtime=50)
    impossible = b.jobs.submit(_nodes(5, 10), runtime=10)
    b.run_until_quiet()
    return b, running, head, short, impossible


@pytest.mark.parametrize("policy", ["easy", "conservative"])
def test_backfilled_job_names_the_waiting_head_in_f58(policy):
    b, running, head, short, _ = _backfill_scene(policy)
    assert b.jobs.job(short).state == "RUN"
    sched = b.jobs.job(short).annotations["sched"]
    assert sched["selection_type"] == "backfilled"
    assert sched["backfill"] == JobID(head).f58
    assert "backfill" not in b.jobs.job(running).annotations["sched"]
    b.run()
    assert "backfill" not in b.jobs.job(head).annotations["sched"]
    b.observer.assert_clean()


def test_fifo_never_annotates_backfill():
    b, running, head, short, _ = _backfill_scene("fifo")
    assert b.jobs.job(short).state == "SCHED"
    b.run()
    for jobid in (running, head, short):
        assert "backfill" not in b.jobs.job(jobid).annotations["sched"]


@pytest.mark.parametrize("policy", ["easy", "conservative"])
def test_stats_count_starts_backfills_denials_and_time_passes(policy):
    b, *_ = _backfill_scene(policy)
    stats = b.stats()
    assert stats["pending_jobs"] == 1  # the head
    assert stats["running_jobs"] == 2
    assert stats["reserved_jobs"] == 1
    assert stats["jobs_started"] == 2
    assert stats["jobs_backfilled"] == 1
    assert stats["jobs_denied"] == 1
    assert stats["passes_completed"] >= 1
    recent = stats["recent_pass_times"]
    assert stats["last_pass_time"] == recent[-1]
    assert stats["max_pass_time"] == max(recent)
    assert min(recent) <= stats["mean_pass_time"] <= max(recent)
    b.run()
    stats = b.stats()
    assert stats["pending_jobs"] == 0 and stats["running_jobs"] == 0
    assert stats["jobs_started"] == 3 and stats["jobs_backfilled"] == 1


@pytest.mark.parametrize("policy", POLICIES)
def test_malformed_and_infeasible_requests_count_as_denials(policy):
    b = start_broker(policy)
    b.jobs.submit(make_jobspec(nodes=1, slots=1, cores=99, duration=10))
    b.jobs.submit(_nodes(1, 10), runtime=10)
    b.run()
    stats = b.stats()
    assert stats["jobs_denied"] == 1
    assert stats["jobs_started"] == 1 and stats["jobs_backfilled"] == 0


def _moves_scene(policy: str, counted: bool):
    """A job holding the whole machine ends at 10 instead of 100; the head
    was reserved at 100 and the next job (conservative only) at 200.
    Whole nodes of 4 x 4 cores (planned with counts), or one slot of
    4 cores on a single node (planned on ranks)."""
    if counted:
        machine, spec = Machine.uniform(4, 4), _nodes(4, 100)
    else:
        machine = Machine.uniform(1, 4)
        spec = make_jobspec(slots=1, cores=4, duration=100)
    b = start_broker(policy, machine=machine)
    b.jobs.submit(spec, runtime=10)
    b.run_until_quiet()
    head = b.jobs.submit(spec, runtime=100)
    second = b.jobs.submit(spec, runtime=100)
    b.run_until_quiet()
    before = b.stats()["reservation_moves"]
    b.run()
    return before, b.stats()["reservation_moves"], b.jobs.job(head), b.jobs.job(second)


@pytest.mark.parametrize("counted", [True, False], ids=["counts", "ranks"])
@pytest.mark.parametrize("policy,moves", [("easy", 1), ("conservative", 2)])
def test_reservation_moves_count_starts_earlier_than_the_reservation(
    policy, moves, counted
):
    before, after, head, second = _moves_scene(policy, counted)
    assert before == 0
    # The head starts at 10, not 100; conservative's second job, reserved
    # at 200, moves to 110 and starts there (easy reserved it only once
    # the head had started: no earlier reservation to move from).
    assert head.t_run - head.t_submit == pytest.approx(10, abs=1e-3)
    assert after == moves
