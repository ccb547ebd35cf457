"""A job that hands its earlier start to an identical job ahead of it
takes that job's reservation, placed around a plan that has changed since
(its own old reservation is gone): it must look for an earlier start, or
it waits, with nothing running, for a time no event comes back to."""

from __future__ import annotations

import pytest
from conftest import POLICIES, start_broker

from mock_broker.jobspec import make_jobspec


@pytest.mark.parametrize("policy", POLICIES)
def test_a_job_that_gives_its_start_ahead_still_moves_earlier(policy):
    broker = start_broker(policy)
    jobs = broker.jobs
    t0 = broker.now
    # Killed at its 100 s limit; housekeeping frees its nodes 2 s apart.
    late = jobs.submit(
        make_jobspec(nodes=2, slots=2, cores=1, duration=100.0),
        runtime=400.0,
        release=[[0.0, [3]], [2.0, [2]], [4.0, [0]], [6.0, [1]]],
    )
    broker.run_until_quiet()
    whole = make_jobspec(nodes=4, slots=4, cores=4, duration=30.0)
    first = jobs.submit(whole, runtime=400.0)
    second = jobs.submit(whole, runtime=5.0)
    small = jobs.submit(make_jobspec(slots=1, cores=1, duration=0.0), runtime=5.0)
    broker.run_for(5000.0)
    assert jobs.job(late).t_end - t0 == pytest.approx(100.0)
    # Conservative: second gave its start to first (at 106) and took first's
    # reservation; with nothing left running when first ends at 136, it
    # must start then, not wait for a pass that never comes.
    assert jobs.job(second).state == "INACTIVE"
    assert jobs.job(second).t_run == pytest.approx(
        jobs.job(first).t_run + 30.0, abs=1e-6
    )
    assert jobs.job(small).state == "INACTIVE"
    broker.observer.assert_clean()
