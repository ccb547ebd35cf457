"""The policy suite: workloads, the per-instant judge, the gallery's policy
schedulers and the reference schedulers."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from conformance.clauses import load_clauses
from conformance.findings import FAIL, NOT_APPLICABLE
from conformance.policy import workloads
from conformance.policy.textbook import WorkloadJob
from conformance.probes import all_probes, execute, failures
from conformance.probes import policy as suite
from conformance.probes.policy import Record

GALLERY = Path(__file__).parent / "gallery"
REFERENCE = Path(__file__).parents[2] / "schedulers"
SEED = 0


def _declared(path: Path) -> dict:
    values = {
        "CLAUSE": None,
        "POLICY": "any",
        "ARGS": [],
        "SHOWN_BY": ["random", "cores"],
        "ALSO": [],
    }
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            name = getattr(node.targets[0], "id", None)
            if name in values:
                values[name] = ast.literal_eval(node.value)
    return values


MODULES = [*sorted(GALLERY.glob("policy_*.py")), GALLERY / "correct_fifo.py"]
FAULTS = [p for p in MODULES if _declared(p)["CLAUSE"]]
CORRECT = [p for p in MODULES if not _declared(p)["CLAUSE"]]


def _run(target, policy: str, args=()) -> dict:
    """workload -> (failed findings by clause, probe statistics)."""
    out = {}
    for workload in workloads.WORKLOADS:
        if policy not in workloads.ONLY_FOR.get(workload, (policy,)):
            continue
        findings, stats = execute(
            f"policy:{policy}:{workload}", str(target), args, policy=policy, seed=SEED
        )
        out[workload] = (failures(findings), stats)
    return out


# -- registry and workloads ----------------------------------------------------------


def test_every_policy_clause_has_probes_for_its_policies_only():
    probes = all_probes()
    for clause, entry in load_clauses().items():
        if not clause.startswith("policy."):
            continue
        for policy in ("fifo", "easy", "conservative", "any"):
            judging = [
                p
                for p in probes.values()
                if p.applies_to(policy) and clause in p.covers
            ]
            assert bool(judging) == (policy in entry.policies), (clause, policy)
    for name in workloads.WORKLOADS:
        assert not probes[f"policy:easy:{name}"].applies_to("fifo")


@pytest.mark.parametrize("seed", [0, 1, 7])
@pytest.mark.parametrize("nodes", [workloads.RANDOM_NODES, workloads.WHOLE_NODES])
def test_random_workloads_fix_the_answer(seed, nodes):
    jobs = workloads.random_jobs(seed, nodes)
    assert len(jobs) == workloads.RANDOM_JOBS
    submits = [j.submit for j in jobs]
    assert all(
        b - a >= 0.001 - 1e-9 for a, b in zip(submits, submits[1:], strict=False)
    )
    assert len({j.limit for j in jobs}) == len(jobs)
    assert all(1 <= j.nodes <= nodes for j in jobs)
    assert all(0 < j.runtime <= j.limit for j in jobs)
    full = sum(j.runtime == j.limit for j in jobs)
    assert 0.2 * len(jobs) < full < 0.5 * len(jobs)  # the rest end early
    for j in jobs:
        for x in (j.submit, j.limit, j.runtime):
            assert round(x, 3) == x
    assert jobs == workloads.random_jobs(seed, nodes)
    assert jobs != workloads.random_jobs(seed + 1, nodes)


def test_the_kth_workload_keeps_the_trace_and_separates_events():
    jobs = workloads.kth_jobs(SEED)
    assert len(jobs) == 150
    assert (jobs[0].nodes, jobs[0].limit) == (8, 3600.0)
    assert 626 < jobs[0].runtime < 627
    submits = [j.submit for j in jobs]
    assert all(b > a for a, b in zip(submits, submits[1:], strict=False))
    assert all(
        1 <= j.nodes <= workloads.KTH_NODES and j.runtime <= j.limit for j in jobs
    )
    assert workloads.kth_jobs(SEED + 1) != jobs


def test_the_cores_workload_asks_for_cores_of_one_node():
    workload = workloads.WORKLOADS["cores"](SEED)
    assert (workload.nodes, workload.units, workload.unit) == (1, 48, "cores")
    job = max(workload.jobs, key=lambda j: j.nodes)
    assert job.nodes > 1
    (slot,) = workload.jobspec(job)["resources"]
    assert (slot["type"], slot["count"]) == ("slot", job.nodes)
    assert [r["type"] for r in slot["with"]] == ["core"]
    assert workload.machine().size == 1
    # Its own jobs, not the random workload's on as many nodes.
    assert workload.jobs != workloads.WORKLOADS["random"](SEED).jobs
    whole = workloads.WORKLOADS["whole-nodes"](SEED)
    assert (whole.units, whole.unit) == (workloads.WHOLE_NODES, "nodes")
    assert whole.jobspec(whole.jobs[0])["resources"][0]["type"] == "node"


def test_the_restarts_workload_restarts_between_events_while_jobs_wait():
    workload = workloads.WORKLOADS["restarts"](SEED)
    restarts = workload.restarts
    assert len(restarts) == workloads.RESTARTS and list(restarts) == sorted(restarts)
    submits = [j.submit for j in workload.jobs]
    assert submits[0] < restarts[0] and restarts[-1] < submits[-1]
    # Half a millisecond from every submit (ends are whole milliseconds too).
    assert min(abs(r - t) for r in restarts for t in submits) >= 0.0004
    assert workloads.ONLY_FOR["restarts"] == ("any", "fifo", "easy")


# -- the judge on hand-made records ---------------------------------------------------


def rec(key, nodes, limit, submit, start=None, end=None, estimate=None):
    job = WorkloadJob(key, submit, nodes, limit, limit)
    r = Record(job, 100 + key, submit, 16, start, end)
    r.requests = [(submit, start)]
    if estimate is not None:
        r.estimate = (submit, estimate, 0)
    return r


def _easy_case(backfilled_start):
    """4 nodes; job 0 (2 nodes) runs to 100; the head (job 1) needs 4;
    job 2 (1 node for 200 s) would delay the head."""
    return [
        rec(0, 2, 100.0, 1.0, 1.0, 101.0),
        rec(1, 4, 50.0, 2.0, 101.0, 151.0),
        rec(2, 1, 200.0, 3.0, backfilled_start, backfilled_start + 200.0),
    ]


def test_a_start_that_delays_the_head_breaks_the_head_reservation():
    divergences, stats = suite.judge_records("easy", 4, _easy_case(3.0))
    assert [d.clause for d in divergences][:1] == ["policy.easy-head-reservation"]
    assert divergences[0].time == 3.0
    assert "j1 holds the reservation at shadow time 101.000" in divergences[0].text
    assert stats["ambiguous"] == 0


def test_the_same_start_at_the_shadow_time_is_textbook():
    divergences, _ = suite.judge_records("easy", 4, _easy_case(151.0))
    assert divergences == []


def test_a_missed_backfill_breaks_easy_backfill():
    records = [
        rec(0, 2, 100.0, 1.0, 1.0, 101.0),
        rec(1, 3, 50.0, 2.0, 101.0, 151.0),
        rec(2, 1, 500.0, 3.0, 151.0, 651.0),  # fits on the extra node at 3
    ]
    divergences, _ = suite.judge_records("easy", 4, records)
    # At 3 (on the extra node) and again at 101 (next to the head).
    assert [(d.clause, d.time) for d in divergences] == [
        ("policy.easy-backfill", 3.0),
        ("policy.easy-backfill", 101.0),
    ]
    assert "the textbook easy starts j2; the scheduler started -" in divergences[0].text


def test_a_late_start_diverges_at_the_instant_it_was_due():
    records = [rec(0, 4, 10.0, 1.0, 1.0, 11.0), rec(1, 4, 10.0, 12.0, 30.0, 40.0)]
    divergences, stats = suite.judge_records("fifo", 4, records)
    assert [(d.clause, d.time) for d in divergences] == [("policy.fifo-order", 12.0)]
    assert "(submit of j1) the textbook fifo starts j1; the scheduler started -" in (
        divergences[0].text
    )
    assert stats == {"instants": 5, "ambiguous": 0, "divergent": 1}


def test_two_events_at_one_instant_are_not_judged():
    # j0 ends as j1 arrives: which the scheduler saw first is not defined.
    records = [rec(0, 4, 10.0, 1.0, 1.0, 11.0), rec(1, 4, 10.0, 11.0, 30.0, 40.0)]
    divergences, stats = suite.judge_records("fifo", 4, records)
    assert stats["ambiguous"] == 1
    assert divergences == []


def test_a_start_after_the_first_t_estimate_is_reported():
    late = rec(0, 1, 10.0, 1.0, 70.0, 80.0, estimate=10.0)
    kept = rec(1, 1, 10.0, 2.0, 10.0, 20.0, estimate=10.0)
    never = rec(2, 1, 10.0, 3.0, estimate=50.0)
    found = suite.t_estimate_divergences([late, kept, never], last=90.0)
    assert [(d.time, d.text.split()[0]) for d in found] == [(70.0, "j0"), (90.0, "j2")]
    assert "60.000s later" in found[0].text


# -- the gallery and the reference schedulers -------------------------------------------


@pytest.mark.parametrize("path", FAULTS, ids=[p.stem for p in FAULTS])
def test_each_policy_fault_fails_its_clause_and_only_that(path):
    declared = _declared(path)
    results = _run(path, declared["POLICY"], declared["ARGS"])
    clause = declared["CLAUSE"]
    # By default, on one-core slots of single-core nodes and on a many-core
    # node alike.
    for workload in declared["SHOWN_BY"]:
        assert clause in results[workload][0], (workload, results[workload])
    for workload, (failed, _) in results.items():
        assert set(failed) <= {clause, *declared["ALSO"]}, (workload, failed)
        for finding in failed.get(clause, []):
            ev = finding.evidence
            assert ev.text and ev.excerpt and ev.time is not None


@pytest.mark.parametrize("path", CORRECT, ids=[p.stem for p in CORRECT])
def test_the_correct_policy_schedulers_pass(path):
    declared = _declared(path)
    for workload, (failed, stats) in _run(path, declared["POLICY"]).items():
        assert not failed, (
            workload,
            {c: f[0].evidence.text for c, f in failed.items()},
        )
        assert stats["divergent"] == 0 and stats["instants"] > 100


@pytest.mark.parametrize("policy", ["fifo", "easy", "conservative"])
def test_reference_scheduler_follows_its_policy(policy):
    target = REFERENCE / policy / f"schedkit-{policy}.py"
    results = _run(target, policy)
    failed = {
        (workload, clause): found[0].evidence.text
        for workload, (by_clause, _) in results.items()
        for clause, found in by_clause.items()
    }
    assert not failed, failed


def test_a_probe_is_deterministic():
    path = str(GALLERY / "policy_fifo_backfills.py")
    runs = [execute("policy:fifo:kth", path, policy="fifo", seed=3) for _ in range(2)]
    assert [f.to_dict() for f in runs[0][0]] == [f.to_dict() for f in runs[1][0]]
    assert any(f.verdict == FAIL for f in runs[0][0])


def test_an_estimate_the_job_manager_cleared_at_a_withdrawal_is_not_stale():
    # Two nodes, one request at a time (queue-depth=1).  B gets t_estimate
    # 50 (when the first node frees); C (urgent, both nodes) then makes the
    # job-manager withdraw B, clearing its annotations; B is sent again only
    # when C starts, at 100.  Its estimate of 50 was gone meanwhile.
    from mock_broker.jobspec import make_jobspec
    from mock_broker.machine import Machine
    from mock_broker.runtime.broker import MockBroker

    b = MockBroker(Machine.uniform(2, 1))
    try:
        b.load(str(REFERENCE / "easy" / "schedkit-easy.py"), ["queue-depth=1"])
        jobs = {}

        def submit(key, nodes, limit, runtime, urgency=16):
            spec = make_jobspec(slots=nodes, duration=limit)
            jobid = b.jobs.submit(spec, urgency, runtime=runtime)
            jobs[jobid] = WorkloadJob(key, b.elapsed, nodes, limit, runtime)

        submit("a1", 1, 50.0, 50.0)
        submit("a2", 1, 100.0, 100.0)
        b.run_for(1.0)
        submit("b", 1, 1000.0, 10.0)
        b.run_for(1.0)
        submit("c", 2, 20.0, 20.0, urgency=20)
        b.run()
        records = {r.job.key: r for r in suite._records(b, jobs)}
        rb = records["b"]
        assert rb.estimates[0][1] == pytest.approx(50.0)
        assert rb.start == pytest.approx(120.0)  # after C (100 to 120)
        assert suite.stale_estimates(list(records.values()), b.elapsed) == []
        assert [when for when, value, _ in rb.estimates if value is None][0] == 2.0
    finally:
        b.close()


def test_a_scheduler_declared_any_is_judged_on_its_estimates_only():
    # The gallery's EASY that keeps the old head's estimate, declared any:
    # no textbook clause, but the stale estimate on the urgent workload.
    path = str(GALLERY / "policy_easy_stale_estimate.py")
    findings, _ = execute("policy:any:urgent", path, policy="any", seed=SEED)
    assert set(failures(findings)) == {suite.CURRENT}
    probes = all_probes()
    assert {p.covers for n, p in probes.items() if n.startswith("policy:any:")} == {
        (suite.CURRENT,)
    }
    assert {n for n in probes if n.startswith("policy:any:")} == {
        f"policy:any:{w}" for w in workloads.WORKLOADS
    }


def test_a_scheduler_that_never_estimates_gets_no_verdict_on_staleness():
    seed = Path(__file__).parents[1] / "mock_broker" / "schedulers" / "seed_minimal.py"
    findings, _ = execute("policy:any:random", str(seed), policy="any", seed=SEED)
    (finding,) = [f for f in findings if f.clause == suite.CURRENT]
    assert finding.verdict == NOT_APPLICABLE
    assert "no probe saw a sched.t_estimate annotation" in finding.evidence.text


def test_an_estimate_that_passes_while_a_resent_request_waits_is_stale():
    # Sent at 1 with t_estimate 3, withdrawn at 2 (cleared), sent again at 5
    # with t_estimate 8, and still waiting when the run ends at 20.
    r = rec(0, 1, 100.0, 1.0)
    r.requests = [(1.0, 2.0), (5.0, None)]
    r.estimates = [(1.0, 3.0, 10), (2.0, None, 11), (5.0, 8.0, 12)]
    (d,) = suite.stale_estimates([r], 20.0)
    assert (d.clause, d.time, d.seq) == (suite.CURRENT, 8.0, 12)
    assert "was still waiting at t=20.000" in d.text
    # Answered at 6 (denied, say) instead: its estimate never passed.
    r.requests = [(1.0, 2.0), (5.0, 6.0)]
    r.estimates = r.estimates + [(6.0, None, 13)]
    assert suite.stale_estimates([r], 20.0) == []
