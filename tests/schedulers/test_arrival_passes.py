"""Unlimited-depth count passes that reach only the jobs that arrived.

When the last pass made nothing lighter and only jobs behind all of its
jobs arrived since, every job it reached would keep what it has: the
pass starts at the first arrival (``_only_arrivals``).  Under the suite's
``check_reuse`` the pass walks every job all the same and fails if one
it would have skipped moves, starts, is denied or is annotated; here the
same workloads also run without it, and every alloc response must be the
same, job for job.
"""

from __future__ import annotations

import random

import pytest
from conftest import start_broker
from random_workloads import run_responses

from flux_sched_base.scheduler import PlanningScheduler
from mock_broker.jobspec import make_jobspec
from mock_broker.machine import Machine

#: Requests planned with counts: whole nodes, or one-core slots.
WHOLE_NODES = [
    {"nodes": 1, "slots": 1, "cores": 4},
    {"nodes": 2, "slots": 2, "cores": 4},
]
CORE_SLOTS = [
    {"slots": 1, "cores": 1},
    {"slots": 3, "cores": 1},
    {"slots": 6, "cores": 1},
]


def _workload(rng: random.Random, shapes: list) -> list[tuple]:
    """``(submit, shape, limit, runtime / limit, housekeeping, urgency)``:
    a full machine at once, then jobs that queue behind it, some ending
    early, some killed at their limit with housekeeping holding their
    nodes a while after (reservations then come due with no event)."""
    jobs = [(0.0, 0, 40.0, rng.choice([1.0, 0.5]), 0.0, 16) for _ in range(4)]
    for _ in range(rng.randint(15, 40)):
        jobs.append(
            (
                3.7 * rng.randint(0, 60),
                rng.randrange(len(shapes)),
                rng.choice([20.0, 40.0, 60.0]),
                rng.choice([1.0, 0.5, 0.25, 2.0]),
                rng.choice([0.0, 0.0, 15.0]),
                rng.choice([16, 16, 16, 16, 20]),
            )
        )
    return jobs


@pytest.mark.parametrize("shapes", [WHOLE_NODES, CORE_SLOTS], ids=["nodes", "cores"])
def test_passes_that_skip_to_the_arrivals_change_no_response(shapes, monkeypatch):
    rng = random.Random(11)
    skipped = 0
    for _ in range(60):
        jobs = _workload(rng, shapes)
        monkeypatch.setattr(PlanningScheduler, "check_reuse", True)
        # every job walked, checked
        checked, checked_stats = run_responses("conservative", [], jobs, shapes)
        assert checked_stats["arrival_passes"] == 0
        monkeypatch.setattr(PlanningScheduler, "check_reuse", False)
        responses, stats = run_responses("conservative", [], jobs, shapes)
        assert responses == checked, jobs
        skipped += stats["arrival_passes"]
    # The workloads exercised the skip: 381 passes with whole nodes, 163
    # with one-core slots when written.
    assert skipped >= 100, skipped


def test_an_arrival_after_the_plan_got_lighter_walks_every_job(monkeypatch):
    monkeypatch.setattr(PlanningScheduler, "check_reuse", False)
    b = start_broker("conservative", [], machine=Machine.uniform(4, 4))
    node = make_jobspec(nodes=1, slots=1, cores=4, duration=100.0)
    for _ in range(4):
        b.jobs.submit(node, runtime=100.0)
    b.run_until_quiet()
    waiting = b.jobs.submit(make_jobspec(nodes=2, slots=2, cores=4, duration=100.0))
    b.run_for(1.0)

    def arrive() -> int:
        b.jobs.submit(node)
        b.run_for(1.0)
        return b.stats()["arrival_passes"]

    # The pass that planned the first waiting job had no record of what
    # came before it: the next one walks every job; then nothing changes
    # but arrivals.
    assert [arrive() for _ in range(3)] == [0, 1, 2]
    b.jobs.cancel(waiting)  # the plan gets lighter: every job is walked
    b.run_for(1.0)
    assert [arrive() for _ in range(2)] == [2, 3]
    b.run()
    b.observer.assert_clean()


def test_an_arrival_once_an_estimate_no_longer_stands_walks_every_job(monkeypatch):
    # A holder's start moves 5 s earlier, within the share of the wait its
    # t_estimate may stand for (1%); with only arrivals since, that share
    # shrinks below 5 s at t=995, and the next arrival's pass must reach
    # the holder to send its start, not skip it.
    monkeypatch.setattr(PlanningScheduler, "check_reuse", False)
    b = start_broker("conservative", [], machine=Machine.uniform(2, 4))
    t0 = b.clock.epoch

    def node(limit):
        return make_jobspec(nodes=1, slots=1, cores=4, duration=limit)

    b.jobs.submit(node(1000.0), runtime=990.0)  # node 0, ends 10 s early
    b.jobs.submit(node(1495.0), runtime=1495.0)  # node 1
    b.run_until(t0 + 1.0)
    b.jobs.submit(node(500.0), runtime=500.0)  # after the first: 1000 -> 990
    b.run_until(t0 + 2.0)
    head = b.jobs.submit(make_jobspec(nodes=2, slots=2, cores=4, duration=100.0))
    b.run_until(t0 + 3.0)

    def estimate():
        return b.jobs.job(head).annotations["sched"]["t_estimate"] - t0

    assert estimate() == 1500.0
    b.run_until(t0 + 991.0)  # it starts at 990; the head could at 1495
    assert estimate() == 1500.0  # stands: 5 s is under 1% of 505 s
    b.jobs.submit(node(100.0))
    b.run_until(t0 + 1000.0)  # a pass over every job, and it stands
    assert estimate() == 1500.0
    skipped = b.stats()["arrival_passes"]
    b.jobs.submit(node(100.0))
    b.run_until(t0 + 1001.0)
    assert b.stats()["arrival_passes"] == skipped
    assert estimate() == 1495.0
    b.run()
    b.observer.assert_clean()
