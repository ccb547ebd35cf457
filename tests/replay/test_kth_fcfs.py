"""The FCFS figures of KTH-SP2, which any correct replay reproduces.

On 100 one-core nodes, with user estimates as limits (a requested time of
-1 would be the run time), first-come first-served scheduling of the
whole KTH-SP2 log gives a mean wait of 218,832 s and a mean bounded
slowdown (10 s) of 4,294.5.  The whole replay through the fifo module
takes about half a minute, too long for this suite; so the figures are
checked here with the tool's own reader, mapping and metrics on the
start times of a small count-based FCFS written in this file, and the
replay tool is checked to match that FCFS job for job on a prefix.
``benchmarks/kth_fcfs.py`` replays the whole log through the tool.
"""

from __future__ import annotations

import heapq
import json

import pytest
from replay_helpers import KTH

from flux_schedkit import cli
from mock_broker.flux_substitute.idset import IDset
from replay.metrics import compute
from replay.records import JobRecord
from replay.workload import ReplayJob, prepare

pytestmark = pytest.mark.skipif(
    not KTH.exists(), reason=f"the KTH-SP2 trace is not there ({KTH})"
)


def fcfs_starts(jobs: list[ReplayJob], total: int) -> list[float]:
    """First-come first-served on *total* identical slots: each job starts
    when it is at the head of the queue and enough slots are free."""
    free = total
    ends: list[tuple[float, int]] = []  # (end, slots) of running jobs
    starts = []
    previous = 0.0
    for job in jobs:  # in submission order
        now = max(job.submit, previous)
        while ends and ends[0][0] <= now:
            free += heapq.heappop(ends)[1]
        while free < job.procs:
            end, slots = heapq.heappop(ends)
            now, free = max(now, end), free + slots
        free -= job.procs
        heapq.heappush(ends, (now + job.runtime, job.procs))
        starts.append(now)
        previous = now
    return starts


def records_of(jobs: list[ReplayJob], starts: list[float]) -> list[JobRecord]:
    """Records of a count-based schedule (the ranks stand for the count)."""
    return [
        JobRecord(
            job.trace_id,
            job.submit,
            start,
            start + job.runtime,
            job.limit,
            job.procs,
            ((str(IDset(range(job.procs))), "0"),),
            "completed",
            "requested",
        )
        for job, start in zip(jobs, starts, strict=True)
    ]


def test_fcfs_figures_of_the_whole_log():
    source = prepare(str(KTH))
    assert (source.machine.size, source.machine.groups[0].cores) == (100, 1)
    jobs = source.workload.jobs
    metrics = compute(records_of(jobs, fcfs_starts(jobs, 100)), total_cores=100)
    assert metrics.jobs == 27_992
    assert round(metrics.mean_wait) == 218_832
    assert round(metrics.mean_bsld, 1) == 4_294.5


def test_the_replay_tool_matches_fcfs_on_a_prefix(tmp_path, capsys):
    out = tmp_path / "fifo.json"
    status = cli.main(
        [
            "replay",
            str(KTH),
            "--scheduler",
            "fifo",
            "--limit",
            "600",
            "--json",
            str(out),
        ]
    )
    assert status == 0, capsys.readouterr().err
    doc = json.loads(out.read_text())
    jobs = prepare(str(KTH), limit=600).workload.jobs
    starts = fcfs_starts(jobs, 100)
    assert [j["start"] for j in doc["jobs"]] == starts
    expected = compute(records_of(jobs, starts), total_cores=100)
    assert doc["metrics"]["mean_wait"] == pytest.approx(expected.mean_wait)
    assert doc["metrics"]["mean_bsld"] == pytest.approx(expected.mean_bsld)
    assert doc["metrics"]["utilization"] == pytest.approx(expected.utilization)
