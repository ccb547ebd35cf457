"""Passes of unlimited-depth conservative that reach only some holders.

After a ranked pass that reached every pending job, the next one reaches
only the jobs something reached since (``HolderLedger``): arrivals, due
reservations, estimates that may no longer stand, and holders that a
lightening may let start earlier.  Under the suite's ``check_reuse`` the
other holders are reached as well and the pass fails if that changes
anything; here the same workloads also run with every pass reaching every
holder, and every job must get the same alloc responses at the same
times (responses at one instant may come in another order: the passes
take their steps in another order).
"""

from __future__ import annotations

import json
import random
from types import SimpleNamespace

from conftest import head_moved_within_the_share, start_broker
from random_workloads import run_responses, workload

from flux_sched_base.reservation import ReservationScheduler
from flux_sched_base.scheduler import PlanningScheduler
from mock_broker.jobspec import make_jobspec
from mock_broker.machine import Machine


def _per_job(responses) -> dict:
    """Each job's alloc responses, ``(time, text)`` in order."""
    out: dict = {}
    for t, text in responses:
        out.setdefault(json.loads(text)["id"], []).append((t, text))
    return out


def test_sparse_passes_change_no_response(monkeypatch):
    rng = random.Random(11)
    sparse = 0
    for _ in range(150):
        jobs = workload(rng)
        monkeypatch.setattr(PlanningScheduler, "check_reuse", True)
        run_responses("conservative", [], jobs)  # every pass checked
        monkeypatch.setattr(PlanningScheduler, "check_reuse", False)
        monkeypatch.setattr(ReservationScheduler, "SPARSE_MAX_REQUESTS", -1)
        every, every_stats = run_responses("conservative", [], jobs)
        assert every_stats["sparse_passes"] == 0
        monkeypatch.setattr(ReservationScheduler, "SPARSE_MAX_REQUESTS", 16)
        responses, stats = run_responses("conservative", [], jobs)
        assert _per_job(responses) == _per_job(every), jobs
        sparse += stats["sparse_passes"]
    assert sparse >= 800, sparse  # 1,298 when written


def test_a_free_reaches_the_holder_it_lets_start_earlier(monkeypatch):
    monkeypatch.setattr(PlanningScheduler, "check_reuse", False)
    b = start_broker("conservative", machine=Machine.uniform(2, 4))
    # Both nodes busy; the first frees early (runtime 30 of 100 s).
    b.jobs.submit(make_jobspec(nodes=1, slots=1, cores=4, duration=100.0), runtime=30.0)
    b.jobs.submit(make_jobspec(nodes=1, slots=1, cores=4, duration=200.0))
    waiting = [
        b.jobs.submit(make_jobspec(slots=1, cores=3, duration=50.0)) for _ in range(3)
    ]
    b.run_for(10.0)
    passes = b.stats()["sparse_passes"]
    b.run_for(30.0)  # the early free
    stats = b.stats()
    assert stats["sparse_passes"] > passes
    # The first waiting job started at the free, not at the planned end.
    assert b.jobs.job(waiting[0]).t_run - b.clock.epoch < 31.0
    b.run()
    b.observer.assert_clean()


def test_an_estimate_left_standing_by_a_share_of_the_wait_is_sent_later(
    monkeypatch,
):
    # The head's start moves 60 s earlier 9,900 s ahead: within 1% of the
    # wait, so its t_estimate is not sent again.  5,000 s later 60 s is
    # more than 1% of the wait left: the pass for an arrival, which
    # reaches only some holders, reaches the head and sends it.
    monkeypatch.setattr(PlanningScheduler, "check_reuse", False)
    # A core-level job behind the head: the queue is planned with the
    # allocator.
    b, t0, head = head_moved_within_the_share(
        "conservative", [{"slots": 1, "cores": 3, "duration": 20_000.0}]
    )
    # An arrival whose pass leaves nothing lightened: from then on only
    # the time can make the head's estimate due.
    b.jobs.submit(make_jobspec(slots=1, cores=1, duration=20_000.0))
    b.run_for(10.0)
    assert b.jobs.job(head).annotations["sched"]["t_estimate"] == t0 + 10_060.0
    b.run_for(5_000.0)
    passes = b.stats()["sparse_passes"]
    b.jobs.submit(make_jobspec(slots=1, cores=1, duration=20_000.0))
    b.run_for(1.0)
    assert b.stats()["sparse_passes"] == passes + 1
    assert b.jobs.job(head).annotations["sched"]["t_estimate"] == t0 + 10_000.0


def test_a_pass_with_an_event_during_it_leaves_no_ledger():
    # An event while the pass was suspended (a free, an arrival ahead) is
    # in no record the pass keeps: the next pass must reach every holder.
    sched = SimpleNamespace(
        _event=5, _queue=[object()], _ledger="old", planner=None, _pending={}
    )
    ReservationScheduler._keep_ledger(sched, 4, [], set())
    assert sched._ledger is None
