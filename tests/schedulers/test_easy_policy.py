"""EASY backfill: the head's reservation and the two backfill clauses."""

from __future__ import annotations

from unittest import mock

from conftest import estimate_history, last_estimates, start_broker
from conftest import whole_nodes as _nodes
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flux_sched_base.scheduler import PlanningScheduler
from mock_broker.jobspec import make_jobspec
from mock_broker.machine import Machine


def test_short_job_backfills_before_the_shadow_time():
    b = start_broker("easy")
    running = b.jobs.submit(_nodes(2, 100), runtime=100)
    b.run_until_quiet()
    head = b.jobs.submit(_nodes(4, 100), runtime=100)
    short = b.jobs.submit(_nodes(1, 50), runtime=50)
    long = b.jobs.submit(_nodes(1, 200), runtime=200)
    b.run_until_quiet()
    assert b.jobs.job(running).state == "RUN"
    assert b.jobs.job(short).state == "RUN"  # ends before the shadow time
    assert b.jobs.job(long).state == "SCHED"  # would delay the head
    shadow = b.clock.epoch + 100
    assert b.jobs.job(head).annotations["sched"]["t_estimate"] == shadow
    assert "t_estimate" not in (b.jobs.job(long).annotations or {}).get("sched", {})
    b.run()
    assert b.jobs.job(head).t_run == shadow
    assert b.jobs.job(long).t_run == shadow + 100
    assert b.jobs.job(short).annotations["sched"]["selection_type"] == "backfilled"
    assert b.jobs.job(head).annotations["sched"]["selection_type"] == "reserved"
    assert b.jobs.job(running).annotations["sched"]["selection_type"] == "immediate"
    b.observer.assert_clean()


def test_long_job_backfills_on_a_node_the_reservation_does_not_need():
    # 4 nodes; a 2-node job runs until 100; the head needs 3 nodes, so its
    # reservation at 100 leaves one node unused.  A 1-node job running far
    # past the shadow time may start now on that node: only the second
    # clause of the EASY rule allows it (flux-core's sched-backfill does not).
    b = start_broker("easy")
    b.jobs.submit(_nodes(2, 100), runtime=100)
    b.run_until_quiet()
    head = b.jobs.submit(_nodes(3, 100), runtime=100)
    long = b.jobs.submit(_nodes(1, 1000), runtime=1000)
    b.run_until_quiet()
    assert b.jobs.job(long).state == "RUN"
    assert b.jobs.job(long).t_run == b.clock.epoch
    b.run()
    head_job = b.jobs.job(head)
    assert head_job.t_run == b.clock.epoch + 100
    assert head_job.state == "INACTIVE" and head_job.result == "completed"
    long_ranks = b.jobs.job(long).R["execution"]["R_lite"][0]["rank"]
    head_ranks = head_job.R["execution"]["R_lite"][0]["rank"]
    assert long_ranks not in head_ranks
    b.observer.assert_clean()


def test_second_long_job_waits_when_no_spare_node_is_left():
    b = start_broker("easy")
    b.jobs.submit(_nodes(2, 100), runtime=100)
    b.run_until_quiet()
    head = b.jobs.submit(_nodes(3, 100), runtime=100)
    first = b.jobs.submit(_nodes(1, 1000), runtime=1000)
    second = b.jobs.submit(_nodes(1, 1000), runtime=1000)
    b.run_until_quiet()
    assert b.jobs.job(first).state == "RUN"
    assert b.jobs.job(second).state == "SCHED"
    b.run()
    assert b.jobs.job(head).t_run == b.clock.epoch + 100
    assert b.jobs.job(second).t_run == b.clock.epoch + 200
    b.observer.assert_clean()


def test_job_without_time_limit_backfills_only_outside_the_reservation():
    b = start_broker("easy")
    b.jobs.submit(_nodes(2, 100), runtime=100)
    b.run_until_quiet()
    head = b.jobs.submit(_nodes(3, 100), runtime=100)
    unlimited = b.jobs.submit(_nodes(1, 0), runtime=500)
    b.run_until_quiet()
    assert b.jobs.job(unlimited).state == "RUN"
    b.run()
    assert b.jobs.job(head).t_run == b.clock.epoch + 100
    b.observer.assert_clean()


def test_displaced_head_loses_its_estimate():
    b = start_broker("easy")
    b.jobs.submit(_nodes(4, 100), runtime=100)
    b.run_until_quiet()
    first = b.jobs.submit(_nodes(4, 100), runtime=100)
    b.run_until_quiet()
    assert b.jobs.job(first).annotations["sched"]["t_estimate"] == b.clock.epoch + 100
    urgent = b.jobs.submit(_nodes(4, 100), runtime=100, urgency=20)
    b.run_until_quiet()
    assert b.jobs.job(urgent).annotations["sched"]["t_estimate"] == b.clock.epoch + 100
    # The displaced head holds no reservation: its estimate is cleared.
    assert b.jobs.job(first).annotations is None
    b.run()
    assert b.jobs.job(urgent).t_run == b.clock.epoch + 100
    assert b.jobs.job(first).t_run == b.clock.epoch + 200
    b.observer.assert_clean()


def test_reservation_moves_earlier_when_a_job_ends_early():
    b = start_broker("easy")
    b.jobs.submit(_nodes(4, 100), runtime=30)
    b.run_until_quiet()
    head = b.jobs.submit(_nodes(4, 100), runtime=100)
    b.run_until_quiet()
    assert b.jobs.job(head).annotations["sched"]["t_estimate"] == b.clock.epoch + 100
    b.run()
    assert b.jobs.job(head).t_run == b.clock.epoch + 30
    b.observer.assert_clean()


# -- random workloads -----------------------------------------------------------

_shapes = st.sampled_from(
    [
        {"nodes": 1, "slots": 1, "cores": 4},
        {"nodes": 2, "slots": 2, "cores": 4},
        {"nodes": 3, "slots": 3, "cores": 4},
        {"nodes": 1, "slots": 2, "cores": 1},
        {"slots": 3, "cores": 2},
        {"slots": 1, "cores": 1},
    ]
)
_job = st.tuples(_shapes, st.integers(1, 8), st.sampled_from([1.0, 1.0, 0.5, 0.2]))
workloads = st.lists(_job, min_size=2, max_size=10)


def run_batch(policy, jobs, exact=False, args=()):
    """Submit *jobs* at time 0 with equal priority and run to the end."""
    b = start_broker(policy, args)
    ids = []
    for shape, tens, fraction in jobs:
        duration = 10.0 * tens
        runtime = duration if exact else duration * fraction
        ids.append(
            b.jobs.submit(make_jobspec(duration=duration, **shape), runtime=runtime)
        )
    b.run()
    return b, ids


@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(workloads)
def test_head_reservation_is_never_delayed(jobs):
    b, ids = run_batch("easy", jobs)
    history = estimate_history(b)
    for jobid in ids:
        job = b.jobs.job(jobid)
        assert job.state == "INACTIVE" and job.result == "completed"
        values = [v for _, v in history.get(jobid, []) if v is not None]
        # Estimates only move earlier, and the job starts no later.
        assert values == sorted(values, reverse=True)
        if values:
            assert job.t_run <= values[-1]
    b.observer.assert_clean()


@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(workloads)
def test_estimates_are_exact_when_runtimes_equal_durations(jobs):
    b, ids = run_batch("easy", jobs, exact=True)
    last = last_estimates(b)
    for jobid, estimate in last.items():
        assert b.jobs.job(jobid).t_run == estimate
    b.observer.assert_clean()


def _single(nodes: int, limit: float) -> dict:
    return make_jobspec(slots=nodes, cores=1, duration=limit)


def test_backfill_scan_of_a_long_queue_tries_one_job_per_request():
    # 4 single-core nodes, 2 busy until 100; the head (4 nodes) reserves
    # them all at 100.  Behind it, 300 jobs of two requests that do not
    # fit now (3 nodes), then a 1-node job that ends before the shadow
    # time: the scan looks at a job of each request, not at all 300.
    b = start_broker("easy", machine=Machine.uniform(4, 1))
    b.jobs.submit(_single(2, 100), runtime=100)
    b.run_until_quiet()
    head = b.jobs.submit(_single(4, 100), runtime=100)
    for k in range(300):
        b.jobs.submit(_single(3, 50 if k % 2 else 200), runtime=10)
    b.run_until_quiet()
    looked_at = []
    units = PlanningScheduler.units

    def counting(scheduler, jobid):
        looked_at.append(jobid)
        return units(scheduler, jobid)

    with mock.patch.object(PlanningScheduler, "units", counting):
        short = b.jobs.submit(_single(1, 50), runtime=50)
        b.run_until_quiet()
    assert b.jobs.job(short).state == "RUN"
    assert b.jobs.job(head).state == "SCHED"
    assert len(looked_at) <= 12  # a plain scan: more than 300
    b.observer.assert_clean()
