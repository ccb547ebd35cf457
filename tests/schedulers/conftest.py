"""Helpers for running the reference schedulers on the mock broker."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.referee import Referee
from mock_broker.jobspec import make_jobspec
from mock_broker.machine import Machine
from mock_broker.runtime.broker import MockBroker

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _check_carried_profiles(monkeypatch):
    """Every profile an unlimited-depth pass carries from the last one is
    compared with one built afresh (a mismatch fails the pass)."""
    from flux_sched_base.counted import CountedPlanning

    monkeypatch.setattr(CountedPlanning, "check_carried", True)


@pytest.fixture(autouse=True)
def _check_kept_searches(monkeypatch):
    """Every holder an unlimited-depth pass keeps because another's search
    covers its own is searched for as well (a start found fails the pass);
    searches are kept on profiles of any length (not only long ones)."""
    from flux_sched_base import compression, counted

    monkeypatch.setattr(counted.CountedPlanning, "check_kept_searches", True)
    monkeypatch.setattr(compression.KeptSearches, "MIN_STEPS", 0)


@pytest.fixture(autouse=True)
def _check_reused_work(monkeypatch):
    """Whatever a pass reuses from the one before (fifo's kept estimates)
    is worked out afresh as well and compared (a mismatch fails the pass)."""
    from flux_sched_base.scheduler import PlanningScheduler

    monkeypatch.setattr(PlanningScheduler, "check_reuse", True)


@pytest.fixture(autouse=True)
def _check_kept_stretches(monkeypatch):
    """Every rank's free stretches the planner kept from an earlier
    question are read afresh from its items as well and compared."""
    from flux_sched_base.planner import Planner

    monkeypatch.setattr(Planner, "check_kept", True)


@pytest.fixture(autouse=True)
def _check_one_rank_searches(monkeypatch):
    """Every earliest start found rank by rank (a one-rank request) is
    searched for the general way as well and compared."""
    from flux_sched_base.planner import Planner

    monkeypatch.setattr(Planner, "check_one_rank", True)


@pytest.fixture(autouse=True)
def _check_scratch_windows(monkeypatch):
    """Every window a scratch copy moves to (copies now outlive a pass and
    follow frees) is compared with what the plan says is busy there."""
    from flux_sched_base.scratch import Scratch

    monkeypatch.setattr(Scratch, "check_windows", True)


POLICIES = ("fifo", "easy", "conservative")


def module_path(policy: str) -> str:
    """The module file of a reference scheduler in this tree."""
    return str(ROOT / "schedulers" / policy / f"schedkit-{policy}.py")


def whole_nodes(n: int, duration: float, cores: int = 4) -> dict:
    """A jobspec for *n* whole 4-core nodes (one slot of *cores* per node)."""
    return make_jobspec(nodes=n, slots=n, cores=cores, duration=duration)


def start_broker(policy: str, args=(), machine: Machine | None = None, **kw):
    """A broker with *policy* loaded (queue-depth=unlimited unless given)."""
    broker = MockBroker(machine or Machine.uniform(4, 4), **kw)
    Referee.attach(broker)
    args = list(args)
    if not any(a.startswith("queue-depth=") for a in args):
        args.append("queue-depth=unlimited")
    broker.load(module_path(policy), args)
    return broker


def sched_annotations(broker: MockBroker) -> list[tuple[float, int, dict, int]]:
    """Every ``sched`` annotation the scheduler sent, in order:
    ``(virtual time, jobid, sched dict, transcript seq)``, from ANNOTATE and
    SUCCESS."""
    out = []
    name = broker.scheduler.name if broker.scheduler else None
    for entry in broker.transcript.entries():
        if entry.kind != "msg" or entry.topic != "sched.alloc (response)":
            continue
        if name is not None and entry.source != name:
            continue
        payload = json.loads(entry.text) if entry.text else {}
        sched = (payload.get("annotations") or {}).get("sched")
        if sched is not None:
            out.append((entry.time, payload["id"], sched, entry.seq))
    return out


def estimate_history(broker: MockBroker) -> dict[int, list[tuple[float, float | None]]]:
    """``jobid -> [(time sent, t_estimate or None), ...]``."""
    history: dict[int, list] = {}
    for t, jobid, sched, _ in sched_annotations(broker):
        if "t_estimate" in sched:
            history.setdefault(jobid, []).append((t, sched["t_estimate"]))
    return history


def last_estimates(broker: MockBroker) -> dict[int, float]:
    """The last non-null ``t_estimate`` of each job that got one."""
    last = {}
    for jobid, values in estimate_history(broker).items():
        for _, value in values:
            if value is not None:
                last[jobid] = value
    return last


@pytest.fixture(params=POLICIES)
def policy(request) -> str:
    return request.param


def head_moved_within_the_share(policy: str, behind: list[dict]):
    """A 2 x 4-core broker whose head (both nodes, 50 s) waits for the two
    running jobs; one ends at 100 s, 9,960 s before its limit, and the
    head's start moves 60 s earlier, 9,900 s ahead: within 1% of the wait,
    so its ``t_estimate`` is not sent again.  *behind*: jobspec arguments
    of jobs queued after it.  Returns ``(broker, t0, head)`` at 200 s."""
    b = start_broker(policy, machine=Machine.uniform(2, 4))
    t0 = b.now
    b.jobs.submit(make_jobspec(nodes=1, slots=1, cores=4, duration=10_000.0))
    b.jobs.submit(
        make_jobspec(nodes=1, slots=1, cores=4, duration=10_060.0), runtime=100.0
    )
    b.run_until_quiet()
    head = b.jobs.submit(make_jobspec(nodes=2, slots=2, cores=4, duration=50.0))
    for spec in behind:
        b.jobs.submit(make_jobspec(**spec))
    b.run_for(200.0)
    assert b.jobs.job(head).annotations["sched"]["t_estimate"] == t0 + 10_060.0
    return b, t0, head
