"""A reservation whose start passed while a running job overran its limit
(housekeeping still holding its rank) must not block the queue forever.

Found by the conformance kit's random operation sequences (seed 0):
conservative kept the overdue promises, clipped them to "from now on",
placed the head behind a lower-priority job's stale hold, and, with
nothing left running, no event ever came to start anything.
"""

from __future__ import annotations

import pytest
from conftest import POLICIES, start_broker

from mock_broker.jobspec import make_jobspec


@pytest.mark.parametrize("policy", POLICIES)
def test_overdue_reservations_start_once_the_late_rank_returns(policy):
    broker = start_broker(policy)
    jobs = broker.jobs
    t0 = broker.now
    # Killed at its 100 s limit; housekeeping frees its node 45 s later.
    late = jobs.submit(
        make_jobspec(slots=1, cores=1, duration=100.0),
        runtime=400.0,
        release=[[45.0, [0, 1, 2, 3]]],
    )
    broker.run_until_quiet()
    whole = jobs.submit(
        make_jobspec(nodes=4, slots=4, cores=4, duration=30.0), runtime=5.0
    )
    half = jobs.submit(
        make_jobspec(nodes=2, slots=2, cores=4, duration=300.0), runtime=5.0
    )
    broker.run_for(5000.0)
    assert jobs.job(late).t_end - t0 == pytest.approx(100.0)
    assert jobs.job(whole).t_run - t0 == pytest.approx(145.0)
    assert jobs.job(half).t_run - t0 == pytest.approx(150.0)
    broker.observer.assert_clean()


@pytest.mark.parametrize("policy", POLICIES)
def test_a_late_release_lets_a_ranked_reservation_move_earlier(policy):
    # The same overdue job, on the ranked path (a core-level job in the
    # queue): its late release must count as new room, or the head keeps
    # a reservation at a time no event comes back to.  Found by the kit's
    # random sequences (10,000 examples, seed 0).
    broker = start_broker(policy)
    jobs = broker.jobs
    t0 = broker.now
    jobs.submit(
        make_jobspec(slots=1, cores=1, duration=30.0),
        runtime=30.0,
        release=[[10.0, [0, 1, 2, 3]]],
    )
    jobs.submit(
        make_jobspec(nodes=3, slots=3, cores=1, exclusive=True, duration=300.0),
        runtime=35.0,
    )
    broker.run_until_quiet()
    head = jobs.submit(
        make_jobspec(nodes=4, slots=4, cores=4, duration=0.0), runtime=5.0
    )
    small = jobs.submit(make_jobspec(slots=1, cores=1, duration=0.0), runtime=5.0)
    broker.run_for(5000.0)
    assert jobs.job(head).t_run - t0 == pytest.approx(40.0)
    assert jobs.job(small).t_run - t0 == pytest.approx(45.0)
    broker.observer.assert_clean()
