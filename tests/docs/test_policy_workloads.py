"""The policy pictures' workloads show what docs/policies.rst says they show.

Each workload in docs/workloads/ is replayed through the reference
schedulers exactly as the docs build does (docs/_ext/policy_pictures.py),
and the start times, the shadow time and the first announced
``t_estimate`` are checked against the page's text.
"""

from __future__ import annotations

import json
import re

import policy_pictures
import pytest
from docs_helpers import DOCS


def starts(workload: str, policy: str, args: list[str] | None = None):
    """Trace job id -> (start, end) in trace seconds, and the broker."""
    result, broker, _ = policy_pictures.replay_workload(workload, policy, args)
    assert not result.problems
    return {r.id: (r.start, r.end) for r in result.records}, broker


def first_t_estimates(broker) -> dict[int, float]:
    """Job id (as the scheduler saw it) -> the first t_estimate announced,
    in seconds since the broker's clock started."""
    out: dict[int, float] = {}
    for entry in broker.transcript.entries():
        if entry.kind != "msg" or entry.topic != "sched.alloc (response)":
            continue
        payload = json.loads(entry.text)
        sched = (payload.get("annotations") or {}).get("sched") or {}
        if sched.get("t_estimate") is not None:
            out.setdefault(payload["id"], sched["t_estimate"])
    return out


@pytest.fixture(scope="module")
def second_rule():
    out = {}
    for policy in policy_pictures.POLICIES:
        jobs, broker = starts("easy-second-rule", policy)
        broker.close()
        out[policy] = jobs
    return out


def test_easy_second_rule_backfills_past_the_shadow_time(second_rule):
    easy = second_rule["easy"]
    shadow = easy[2][0]  # the head, job 2, starts at its reservation
    assert shadow == 100.0
    assert easy[3] == (2.0, 302.0)  # starts at once, ends after the shadow time
    assert easy[3][1] > shadow
    assert easy[4] == (3.0, 53.0)  # the first rule: ends before the shadow time
    assert easy[4][1] <= shadow


def test_fifo_does_not_backfill(second_rule):
    fifo = second_rule["fifo"]
    assert fifo[2][0] == 100.0
    assert fifo[3][0] == 100.0
    assert fifo[4][0] == 150.0


def test_conservative_matches_easy_on_the_second_rule_workload(second_rule):
    assert second_rule["conservative"] == second_rule["easy"]


def test_conservative_compresses_a_reservation_that_easy_does_not_protect():
    jobs, broker = starts("conservative-compression", "conservative")
    try:
        estimates = first_t_estimates(broker)
        job3 = broker.jobs.job(sorted(broker.jobs.jobs)[2])
    finally:
        broker.close()
    assert jobs[1] == (0.0, 50.0)  # asked for 200 s, ended after 50 s
    assert jobs[2][0] == 50.0
    assert jobs[3][0] == 150.0
    assert jobs[4][0] == 250.0  # kept from delaying job 3
    assert jobs[5] == (4.0, 44.0)  # backfilled at once
    first = estimates[job3.id]
    announced = first - (job3.t_submit - 2.0)  # trace seconds (job 3 submits at 2 s)
    assert announced == 300.0
    assert jobs[3][0] < announced


def test_easy_lets_a_backfilled_job_delay_the_second_job():
    easy, broker = starts("conservative-compression", "easy")
    broker.close()
    assert easy[4][0] == 3.0
    assert easy[3][0] == 403.0
    fifo, broker = starts("conservative-compression", "fifo")
    broker.close()
    assert fifo[3][0] == 150.0
    assert fifo[5][0] == 250.0


@pytest.mark.parametrize(("depth", "like"), [("1", "easy"), ("2", "conservative")])
def test_hybrid_depth(depth, like):
    hybrid, broker = starts(
        "conservative-compression", "conservative", [f"reservation-depth={depth}"]
    )
    broker.close()
    reference, broker = starts("conservative-compression", like)
    broker.close()
    assert hybrid == reference


def test_hybrid_depth_sits_between_easy_and_conservative():
    runs = {}
    for depth in ("1", "2", "unlimited"):
        jobs, broker = starts(
            "hybrid-depth", "conservative", [f"reservation-depth={depth}"]
        )
        broker.close()
        runs[depth] = {job: start for job, (start, _) in jobs.items()}
    # Depth 1 protects job 2 only: jobs 5 and 6 start at once, job 3 waits
    # for job 5 and job 4 for job 6.
    assert runs["1"][5] == 4.0 and runs["1"][6] == 5.0
    assert runs["1"][3] == 254.0 and runs["1"][4] == 355.0
    # Depth 2 protects jobs 2 and 3: job 5 waits, job 6 still delays job 4.
    assert runs["2"][3] == 200.0 and runs["2"][6] == 5.0
    assert runs["2"][5] > runs["2"][4] == 355.0
    # Unlimited protects every job: 2, 3 and 4 at 100, 200 and 300 s.
    assert [runs["unlimited"][j] for j in (2, 3, 4)] == [100.0, 200.0, 300.0]
    assert runs["unlimited"][5] == runs["unlimited"][6] == 400.0
    easy, broker = starts("hybrid-depth", "easy")
    broker.close()
    assert {job: start for job, (start, _) in easy.items()} == runs["1"]


def test_pictures_are_drawn_for_every_figure_of_the_page(tmp_path):
    written = policy_pictures.draw(tmp_path)
    page = (DOCS / "policies.rst").read_text()
    for path in written:
        assert path.read_bytes().startswith(b"\x89PNG")
        assert f"_generated/policies/{path.name}" in page
    figures = set(re.findall(r"_generated/policies/([\w.-]+\.png)", page))
    assert figures == {path.name for path in written}
