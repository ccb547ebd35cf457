"""The figures of a replay, against values computed by hand."""

from __future__ import annotations

import pytest

from mock_broker.flux_substitute.idset import IDset
from replay.metrics import BSLD_THRESHOLD, Metrics, bounded_slowdown, compute
from replay.records import JobRecord


def record(job_id, submit, start=None, end=None, cores=1, result="completed"):
    allocation = () if start is None else ((str(IDset(range(cores))), "0"),)
    return JobRecord(
        job_id, submit, start, end, 100.0, cores, allocation, result, "requested"
    )


#: On 4 cores: A runs 0-100 on 2 cores; B waits 90 s, runs 100-130 on 4;
#: C waits 110 s, runs 130-135 on 1; D is still pending; E was denied.
RECORDS = [
    record(1, 0.0, 0.0, 100.0, cores=2),
    record(2, 10.0, 100.0, 130.0, cores=4),
    record(3, 20.0, 130.0, 135.0, cores=1),
    record(4, 30.0, result="pending"),
    record(5, 40.0, result="denied"),
]


def test_figures_of_a_hand_computed_schedule():
    m = compute(RECORDS, total_cores=4, wall_seconds=2.0)
    assert (m.jobs, m.started, m.completed, m.denied, m.unfinished) == (5, 3, 3, 1, 1)
    # Waits 0, 90, 110.
    assert m.mean_wait == pytest.approx(200 / 3)
    assert m.median_wait == 90.0
    # Rank (3 - 1) * 0.95 = 1.9: 90 + 0.9 * (110 - 90).
    assert m.p95_wait == pytest.approx(108.0)
    assert m.max_wait == 110.0
    # Bounded slowdowns 1 (100/100), 4 (120/30), 11.5 (115/10: C ran 5 s).
    assert m.mean_bsld == pytest.approx(16.5 / 3)
    assert m.span == 40.0  # submissions from 0 to 40
    assert m.makespan == 135.0  # first submission to last end
    # 100 s x 2 + 30 s x 4 + 5 s x 1 core-seconds over 4 cores x 135 s.
    assert m.utilization == pytest.approx(325 / 540)
    assert m.jobs_per_second == 2.5


def test_bounded_slowdown():
    assert BSLD_THRESHOLD == 10.0
    assert bounded_slowdown(0.0, 5.0) == 1.0  # never below 1
    assert bounded_slowdown(50.0, 5.0) == 5.5  # short jobs count as 10 s
    assert bounded_slowdown(90.0, 30.0) == 4.0


def test_one_and_no_records():
    m = compute([record(1, 5.0, 15.0, 25.0)], total_cores=1)
    assert (m.mean_wait, m.median_wait, m.p95_wait, m.max_wait) == (10.0,) * 4
    assert m.utilization == pytest.approx(10 / 20)
    assert m.jobs_per_second == 0.0  # no wall time measured
    empty = compute([], total_cores=4)
    assert (empty.jobs, empty.mean_wait, empty.makespan, empty.utilization) == (
        0,
        0.0,
        0.0,
        0.0,
    )


def test_metrics_round_trip_through_json():
    m = compute(RECORDS, total_cores=4, wall_seconds=2.0)
    assert Metrics.from_dict({**m.to_dict(), "extra": 1}) == m
