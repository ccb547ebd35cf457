"""The data behind the pictures, and the pictures as PNG files."""

from __future__ import annotations

import pytest
from PIL import Image
from replay_helpers import SEED, SMALL, write

from flux_schedkit import cli
from replay.pictures import (
    Box,
    draw_gantt,
    draw_usage,
    gantt_boxes,
    time_average,
    usage_series,
    usage_steps,
)
from replay.records import JobRecord
from replay.swf import Window


def record(job_id, submit, start, end, allocation, result="completed"):
    return JobRecord(
        job_id, submit, start, end, 100.0, 1, tuple(allocation), result, "requested"
    )


def assert_png(path, width=1000):
    with Image.open(path) as image:
        assert image.format == "PNG"
        assert image.size[0] == width


def test_whole_nodes_make_one_box_per_run_of_ranks():
    job = record(7, 0.0, 10.0, 40.0, [("0-1,3", "0")])
    assert gantt_boxes([job], cores_per_node=1) == [
        Box(7, 10.0, 40.0, 0.0, 2.0),
        Box(7, 10.0, 40.0, 3.0, 1.0),
    ]


def test_part_of_a_node_is_part_of_its_row():
    # 4-core nodes: cores 1-2 of rank 2 are the middle half of row 2.
    job = record(8, 0.0, 0.0, 5.0, [("2", "1-2"), ("5", "0,3")])
    assert gantt_boxes([job], cores_per_node=4) == [
        Box(8, 0.0, 5.0, 2.25, 0.5),
        Box(8, 0.0, 5.0, 5.0, 0.25),
        Box(8, 0.0, 5.0, 5.75, 0.25),
    ]


def test_the_window_clips_and_drops_boxes():
    jobs = [
        record(1, 0.0, 0.0, 100.0, [("0", "0")]),
        record(2, 0.0, 100.0, 120.0, [("1", "0")]),  # after the window
        record(3, 0.0, None, None, []),  # never ran
        record(4, 0.0, 60.0, 60.0, [("2", "0")]),  # ran for no time
    ]
    assert gantt_boxes(jobs, 1, Window(50.0, 80.0)) == [Box(1, 50.0, 80.0, 0.0, 1.0)]


#: On 4 cores: job 1 (2 cores) runs 0-100; job 2 (4 cores), submitted at
#: 10, runs 100-130; job 3, submitted at 20, never starts.
RECORDS = [
    record(1, 0.0, 0.0, 100.0, [("0-1", "0")]),
    record(2, 10.0, 100.0, 130.0, [("0-3", "0")]),
    record(3, 20.0, None, None, [], result="pending"),
]


def test_usage_steps_are_exact():
    steps = usage_steps(RECORDS)
    assert steps.times == [0.0, 10.0, 20.0, 100.0, 130.0]
    # At 100 job 1 ends as job 2 starts: 2 - 2 + 4 cores, one job left.
    assert steps.busy == [2, 2, 2, 4, 0]
    assert steps.queued == [0, 1, 2, 1, 1]


def test_time_average_of_a_step_function():
    # 0 before 10, then 2 until 20, then 6 on.
    times, values = [10.0, 20.0], [2, 6]
    assert time_average(times, values, [0.0, 10.0, 15.0, 30.0]) == [
        0.0,
        2.0,
        pytest.approx((5 * 2 + 10 * 6) / 15),
    ]


def test_usage_series_bins_utilization_and_queue():
    series = usage_series(RECORDS, total_cores=4, bins=2)
    assert series.edges == [0.0, 65.0, 130.0]
    # 0-65: 2 cores busy; 65-130: 2 cores to 100, then 4.
    assert series.utilization == pytest.approx([0.5, (35 * 2 + 30 * 4) / (65 * 4)])
    # Jobs waiting: 0 to 10, 1 to 20, 2 to 65; then 2 to 100, 1 to 130.
    assert series.queue == pytest.approx([(10 * 1 + 45 * 2) / 65, (35 * 2 + 30) / 65])
    assert usage_series([], 4).edges == []


def test_pictures_are_png_files(tmp_path):
    gantt, plot = tmp_path / "g.png", tmp_path / "p.png"
    assert draw_gantt(RECORDS, 4, 1, gantt, title="three jobs") == 2
    assert_png(gantt)
    draw_usage({"a": usage_series(RECORDS, 4), "b": usage_series(RECORDS, 4)}, plot)
    assert_png(plot)


def test_replay_draws_both_pictures(tmp_path, capsys):
    gantt, plot = tmp_path / "g.png", tmp_path / "p.png"
    argv = ["replay", str(write(tmp_path, SMALL)), "--scheduler", SEED]
    argv += ["--gantt", str(gantt), "--gantt-window", "100:190", "--plot", str(plot)]
    assert cli.main(argv) == 0
    assert f"wrote {gantt}" in capsys.readouterr().out
    assert_png(gantt)
    assert_png(plot)
