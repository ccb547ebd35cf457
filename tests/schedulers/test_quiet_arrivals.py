"""Arrivals that get no pass (``arrival_is_quiet``).

A job that arrives behind every reservation a backfilling pass may hold,
with an identical request behind them already waiting, while nothing in
the plan has changed by itself, would be left waiting by a pass that
changes nothing else: the scheduler asks for none.  Under the suite's
``check_reuse`` the pass runs all the same and fails if it starts, denies,
annotates or reserves anything; here the same workloads also run without
it, and every alloc response must be the same, job for job.
"""

from __future__ import annotations

import random

import pytest
from conftest import head_moved_within_the_share, start_broker
from random_workloads import run_responses, workload

from flux_sched_base.scheduler import PlanningScheduler
from mock_broker.jobspec import make_jobspec
from mock_broker.machine import Machine


@pytest.mark.parametrize(
    "policy,args",
    [("easy", []), ("conservative", ["reservation-depth=2"])],
    ids=["easy", "depth-2"],
)
def test_quiet_arrivals_change_no_response(policy, args, monkeypatch):
    rng = random.Random(7)
    skipped = fewer_passes = 0
    for _ in range(150):
        jobs = workload(rng)
        monkeypatch.setattr(PlanningScheduler, "check_reuse", True)
        checked, checked_stats = run_responses(
            policy, args, jobs
        )  # every pass, checked
        assert checked_stats["arrivals_without_pass"] == 0
        monkeypatch.setattr(PlanningScheduler, "check_reuse", False)
        responses, stats = run_responses(policy, args, jobs)
        assert responses == checked, jobs
        skipped += stats["arrivals_without_pass"]
        fewer_passes += checked_stats["passes_completed"] - stats["passes_completed"]
    # The workloads exercised quiet arrivals (57 for easy and 32 at depth 2
    # when written; 33 and 20 at 7a83126, as at 963a499 before it),
    # and they saved passes (49 and 27; 29 and 17).
    assert skipped >= 20 and fewer_passes >= 15, (skipped, fewer_passes)


def _full_machine_with_a_blocked_head(args=()):
    b = start_broker("easy", list(args), machine=Machine.uniform(2, 4))
    for _ in range(2):
        b.jobs.submit(make_jobspec(nodes=1, slots=1, cores=4, duration=100.0))
    b.run_until_quiet()
    head = b.jobs.submit(make_jobspec(nodes=2, slots=2, cores=4, duration=50.0))
    b.jobs.submit(make_jobspec(slots=1, cores=1, duration=1000.0))
    b.run_for(10.0)
    return b, head


def test_an_identical_arrival_behind_a_blocked_head_gets_no_pass(monkeypatch):
    monkeypatch.setattr(PlanningScheduler, "check_reuse", False)
    b, head = _full_machine_with_a_blocked_head()
    passes = b.stats()["passes_completed"]
    late = b.jobs.submit(make_jobspec(slots=1, cores=1, duration=1000.0))
    b.run_for(10.0)
    stats = b.stats()
    assert stats["arrivals_without_pass"] == 1
    assert stats["passes_completed"] == passes
    b.run()
    # The head still starts when both nodes come back, the others after it.
    assert b.jobs.job(head).t_run < b.jobs.job(late).t_run
    b.observer.assert_clean()


def test_an_arrival_ahead_of_the_head_gets_a_pass(monkeypatch):
    monkeypatch.setattr(PlanningScheduler, "check_reuse", False)
    b, head = _full_machine_with_a_blocked_head()
    b.jobs.submit(make_jobspec(slots=1, cores=1, duration=1000.0))
    b.run_for(10.0)
    assert b.stats()["arrivals_without_pass"] == 1
    urgent = b.jobs.submit(make_jobspec(slots=1, cores=1, duration=1000.0), urgency=20)
    b.run_for(10.0)
    assert b.stats()["arrivals_without_pass"] == 1
    # The urgent job is the new head and holds the reservation.
    assert b.jobs.job(urgent).annotations["sched"]["t_estimate"] is not None
    assert "t_estimate" not in (b.jobs.job(head).annotations or {}).get("sched", {})
    # An identical one behind it, ahead of the old head: the job of that
    # request behind the new head could not start, so neither can it.
    b.jobs.submit(make_jobspec(slots=1, cores=1, duration=1000.0), urgency=20)
    b.run_for(10.0)
    assert b.stats()["arrivals_without_pass"] == 2


def test_an_arrival_once_a_running_job_is_overdue_gets_a_pass(monkeypatch):
    monkeypatch.setattr(PlanningScheduler, "check_reuse", False)
    b = start_broker("easy", machine=Machine.uniform(2, 4))
    # Killed at its 100 s limit; housekeeping frees its node 50 s later.
    b.jobs.submit(
        make_jobspec(nodes=1, slots=1, cores=4, duration=100.0),
        runtime=400.0,
        release=[[50.0, [0, 1]]],
    )
    b.jobs.submit(make_jobspec(nodes=1, slots=1, cores=4, duration=1000.0))
    b.run_until_quiet()
    b.jobs.submit(make_jobspec(nodes=2, slots=2, cores=4, duration=50.0))
    b.jobs.submit(make_jobspec(slots=1, cores=1, duration=1000.0))
    b.run_for(10.0)
    b.jobs.submit(make_jobspec(slots=1, cores=1, duration=1000.0))
    b.run_for(10.0)
    assert b.stats()["arrivals_without_pass"] == 1  # before: quiet
    b.run_for(100.0)  # past the first job's planned end, before its free
    b.jobs.submit(make_jobspec(slots=1, cores=1, duration=1000.0))
    b.run_for(1.0)
    assert b.stats()["arrivals_without_pass"] == 1


def test_an_estimate_left_standing_by_a_share_of_the_wait_is_sent_later(
    monkeypatch,
):
    # The head's start moves 60 s earlier 9,900 s ahead: within 1% of the
    # wait, so its t_estimate is not sent again.  5,000 s later 60 s is
    # more than 1% of the wait left: a pass then sends it, so an arrival
    # that would otherwise be quiet gets one.
    monkeypatch.setattr(PlanningScheduler, "check_reuse", False)
    b, t0, head = head_moved_within_the_share(
        "easy", [{"slots": 1, "cores": 1, "duration": 20_000.0}] * 2
    )
    b.run_for(5_000.0)
    b.jobs.submit(make_jobspec(slots=1, cores=1, duration=20_000.0))
    b.run_for(1.0)
    assert b.stats()["arrivals_without_pass"] == 0
    assert b.jobs.job(head).annotations["sched"]["t_estimate"] == t0 + 10_000.0
    # Sent, that pass settles: the next such arrival is quiet.
    b.jobs.submit(make_jobspec(slots=1, cores=1, duration=20_000.0))
    b.run_for(1.0)
    assert b.stats()["arrivals_without_pass"] == 1


@pytest.mark.parametrize("check", [False, True], ids=["skipped", "checked"])
def test_an_arrival_while_such_an_estimate_still_stands_is_quiet(monkeypatch, check):
    # The head's 60 s earlier start stands by 1% of the wait until 4,000 s
    # after t0 (10,000 s - 60 s / 1%).  An arrival before then finds a pass
    # would send nothing: it gets none (checked: the pass runs and must
    # change nothing).  One after then gets a pass, which sends it.
    monkeypatch.setattr(PlanningScheduler, "check_reuse", check)
    b, t0, head = head_moved_within_the_share(
        "easy", [{"slots": 1, "cores": 1, "duration": 20_000.0}] * 2
    )
    b.run_for(3_000.0)  # at t0 + 3,200 s
    b.jobs.submit(make_jobspec(slots=1, cores=1, duration=20_000.0))
    b.run_for(1.0)
    assert b.stats()["arrivals_without_pass"] == (0 if check else 1)
    assert b.jobs.job(head).annotations["sched"]["t_estimate"] == t0 + 10_060.0
    b.run_for(1_000.0)  # past t0 + 4,000 s
    b.jobs.submit(make_jobspec(slots=1, cores=1, duration=20_000.0))
    b.run_for(1.0)
    assert b.stats()["arrivals_without_pass"] == (0 if check else 1)
    assert b.jobs.job(head).annotations["sched"]["t_estimate"] == t0 + 10_000.0


def _long_queue_responses(policy: str, args: list[str], seed: int):
    """Alloc responses and stats for 300 one-slot jobs (1-4 cores, 600 s
    limit, 10-69 s runtime) arriving faster than 8 x 16 cores run them:
    the queue grows to about a hundred, and holders' estimates, minutes
    ahead, stand by the share of the wait as earlier ends move them."""
    rng = random.Random(seed)
    b = start_broker(policy, args, machine=Machine.uniform(8, 16))
    t = 0.0
    for _ in range(300):
        t += rng.expovariate(2.5)  # load about 1.9
        cores, runtime = rng.randint(1, 4), float(rng.randint(10, 69))

        def submit(cores=cores, runtime=runtime):
            spec = make_jobspec(slots=1, cores=cores, duration=600.0)
            b.jobs.submit(spec, runtime=runtime)

        b.at(b.clock.epoch + t, submit)
    b.run()
    b.observer.assert_clean()
    # By instant: the passes check_reuse adds move the points where a pass
    # yields, and so the order of responses sent at one instant.
    responses: dict[float, list[str]] = {}
    for e in b.transcript.entries():
        if e.kind == "msg" and e.topic == "sched.alloc (response)":
            responses.setdefault(e.time, []).append(e.text)
    stats = b.stats()
    b.close()
    return {t: sorted(texts) for t, texts in responses.items()}, stats


@pytest.mark.parametrize(
    "policy,args",
    [("easy", []), ("conservative", ["reservation-depth=8"])],
    ids=["easy", "depth-8"],
)
def test_on_a_long_queue_quiet_arrivals_change_no_response(policy, args, monkeypatch):
    # Every arrival the scheduler finds quiet gets its pass all the same
    # with check_reuse, which fails if the pass changes anything; without
    # it the responses must be the same, instant by instant.  Most arrivals
    # are quiet here although some estimate stands by the share of the
    # wait: 442 of 600 arrivals for easy, 452 at depth 8 (at 963a499, before
    # an estimate standing so ended the quiet: 220 of 300 and 25 of 300
    # with seed 1).
    skipped = 0
    for seed in (1, 2):
        monkeypatch.setattr(PlanningScheduler, "check_reuse", True)
        checked, _ = _long_queue_responses(policy, args, seed)
        monkeypatch.setattr(PlanningScheduler, "check_reuse", False)
        responses, stats = _long_queue_responses(policy, args, seed)
        assert responses == checked
        skipped += stats["arrivals_without_pass"]
    assert skipped >= 400, skipped
