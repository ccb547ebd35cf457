"""Promises on multi-core nodes with core-level jobs (planned with ranks).

The count-based definitions do not apply when jobs share nodes, but the
promises they make still hold: a conservative reservation never moves
later than the first estimate (nothing here raises priorities, extends
expirations or takes nodes down), EASY never delays the head's
reservation, and identical jobs start in queue order.
"""

from __future__ import annotations

import pytest
from conftest import estimate_history, start_broker
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mock_broker.jobspec import make_jobspec
from mock_broker.machine import Machine

#: Core-level requests on 4-core nodes: none takes a node whole.
SHAPES = [
    {"slots": 1, "cores": 1},
    {"slots": 3, "cores": 1},
    {"slots": 2, "cores": 3},
    {"slots": 5, "cores": 2},
    {"nodes": 1, "slots": 2, "cores": 1},
    {"nodes": 2, "slots": 4, "cores": 1},
    {"nodes": 3, "slots": 3, "cores": 2},
]

_job = st.tuples(
    st.integers(0, 15).map(lambda n: 10.0 * n),  # submit
    st.integers(0, len(SHAPES) - 1),  # shape
    st.sampled_from([20.0, 40.0, 60.0]),  # time limit
    st.sampled_from([1.0, 1.0, 0.5, 0.25]),  # runtime / limit
)
workloads = st.lists(_job, min_size=6, max_size=20)

_props = settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)


def run(policy, jobs, exact=False):
    """Submit *jobs* at their times on 4 x 4 cores; run to the end.

    Returns the broker and the job ids in submission order.
    """
    b = start_broker(policy, machine=Machine.uniform(4, 4))
    ids = []
    for submit, shape, limit, fraction in sorted(jobs, key=lambda j: j[0]):
        runtime = limit if exact else limit * fraction

        def submit_job(shape=shape, limit=limit, runtime=runtime):
            spec = make_jobspec(duration=limit, **SHAPES[shape])
            ids.append(b.jobs.submit(spec, runtime=runtime))

        b.at(b.clock.epoch + submit, submit_job)
    b.run()
    b.observer.assert_clean()
    for jobid in ids:
        assert b.jobs.job(jobid).result == "completed"
    return b, ids


@_props
@given(workloads)
def test_conservative_never_starts_a_job_after_its_first_estimate(jobs):
    b, ids = run("conservative", jobs)
    for jobid, values in estimate_history(b).items():
        estimates = [v for _, v in values if v is not None]
        if estimates:
            assert b.jobs.job(jobid).t_run <= estimates[0]


@_props
@given(workloads)
def test_conservative_estimates_are_exact_when_jobs_run_to_their_limit(jobs):
    b, ids = run("conservative", jobs, exact=True)
    for jobid, values in estimate_history(b).items():
        estimates = {v for _, v in values if v is not None}
        assert estimates <= {b.jobs.job(jobid).t_run}


@_props
@given(workloads)
def test_easy_never_delays_the_head_reservation(jobs):
    b, ids = run("easy", jobs)
    for jobid, values in estimate_history(b).items():
        estimates = [v for _, v in values if v is not None]
        # Only the head holds an estimate; it only moves earlier, and the
        # job starts no later than the last one.
        assert estimates == sorted(estimates, reverse=True)
        if estimates:
            assert b.jobs.job(jobid).t_run <= estimates[-1]


_equal_jobs = st.lists(
    st.tuples(
        st.integers(0, 15).map(lambda n: 10.0 * n),
        st.sampled_from([0, 2, 4]),
        st.sampled_from([20.0, 40.0]),
        st.sampled_from([1.0, 0.5]),
    ),
    min_size=6,
    max_size=20,
)


@pytest.mark.parametrize("policy", ["fifo", "easy", "conservative"])
@_props
@given(_equal_jobs)
def test_identical_jobs_start_in_queue_order(policy, jobs):
    b, ids = run(policy, jobs)
    by_request: dict = {}
    for jobid in ids:  # submission order, which is queue order here
        job = b.jobs.job(jobid)
        key = repr((job.jobspec["resources"], job.duration))
        by_request.setdefault(key, []).append(job.t_run)
    for starts in by_request.values():
        assert starts == sorted(starts)
