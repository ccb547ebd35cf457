"""``flux-schedkit replay``: outputs, and a one-line message with a
documented exit status for every way it can go wrong."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from replay_helpers import SEED, SMALL, scheduler_module, swf_line, write

from flux_schedkit import cli
from flux_schedkit.console import ProgressBars


def cli_replay(capsys, *argv):
    status = cli.main(["replay", *map(str, argv)])
    out, err = capsys.readouterr()
    return status, out, err


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


def test_prints_the_setup_and_the_figures(capsys, tmp_path):
    status, out, err = cli_replay(capsys, write(tmp_path, SMALL), "--scheduler", SEED)
    assert status == 0, err
    assert "t.swf: 3 jobs to replay (4 records read; 1 unusable" in out
    assert "machine: 4 nodes x 1 core (from the header's MaxNodes and MaxProcs)" in out
    assert "1 jobs have none, so their run time is their estimate" in out
    for figure in (
        "simulated span",
        "mean wait              30 s",
        "median wait            40 s",
        "p95 wait",
        "mean bounded slowdown",
        "utilization",
        "makespan",
        "jobs per second",
    ):
        assert figure in out
    assert err == ""  # no progress bar when stderr is not a terminal


def test_json_and_csv_hold_every_job(capsys, tmp_path):
    out_json, out_csv = tmp_path / "r.json", tmp_path / "r.csv"
    status, out, _ = cli_replay(
        capsys,
        write(tmp_path, SMALL),
        "--scheduler",
        SEED,
        "--json",
        out_json,
        "--csv",
        out_csv,
    )
    assert status == 0
    text = out_json.read_text()
    doc = json.loads(text)
    assert doc["format"] == "flux-schedkit-replay/1"
    # One line per job record, so a whole log's result stays small.
    assert sum(line.startswith('{"id":') for line in text.splitlines()) == 3
    assert doc["metrics"]["mean_wait"] == 30.0
    assert doc["machine"] == {
        "nodes": 4,
        "cores_per_node": 1,
        "gpus_per_node": 0,
        "source": "the header's MaxNodes and MaxProcs",
    }
    assert doc["mapping"]["estimated_from_run"] == 1
    # The scheduler's own statistics once the replay is over.
    assert doc["scheduler_stats"]["sched_passes"] >= 1
    assert [
        (j["id"], j["submit"], j["start"], j["end"], j["ranks"], j["cores"], j["wait"])
        for j in doc["jobs"]
    ] == [
        (1, 100.0, 100.0, 150.0, "0-1", 2, 0.0),
        (2, 110.0, 150.0, 180.0, "0-3", 4, 40.0),
        (4, 130.0, 180.0, 200.0, "0-2", 3, 50.0),
    ]
    rows = list(csv.DictReader(io.StringIO(out_csv.read_text())))
    assert [(r["id"], r["wait"], r["ranks"]) for r in rows] == [
        ("1", "0.0", "0-1"),
        ("2", "40.0", "0-3"),
        ("4", "50.0", "0-2"),
    ]


def test_the_scheduler_s_own_statistics_close_the_figures(capsys, tmp_path):
    out_json = tmp_path / "r.json"
    trace = write(tmp_path, SMALL)
    status, out, _ = cli_replay(
        capsys, trace, "--scheduler", "easy", "--json", out_json
    )
    assert status == 0
    stats = json.loads(out_json.read_text())["scheduler_stats"]
    assert stats["jobs_started"] == 3 and stats["reservation_depth"] == "1"
    lines = out.splitlines()
    passes = next(line for line in lines if line.startswith("scheduler passes"))
    assert f"{stats['passes_completed']:,} (mean " in passes
    assert f"jobs backfilled        {stats['jobs_backfilled']}" in lines
    assert f"reservation moves      {stats['reservation_moves']}" in lines
    # A module that answers no stats-get: no statistics, no such lines.
    null = Path(__file__).parents[2] / "benchmarks" / "null_scheduler.py"
    status, out, _ = cli_replay(capsys, trace, "--scheduler", null, "--json", out_json)
    assert status == 0
    assert json.loads(out_json.read_text())["scheduler_stats"] is None
    assert "scheduler passes" not in out


def test_mapping_options_reach_the_replay(capsys, tmp_path):
    out_json = tmp_path / "r.json"
    text = SMALL + swf_line(9, 140, 10, 9, 20)
    status, out, _ = cli_replay(
        capsys,
        write(tmp_path, text),
        "--scheduler",
        SEED,
        "--nodes",
        "2",
        "--cores-per-node",
        "2",
        "--exact-estimates",
        "--window",
        "105:",
        "--json",
        out_json,
    )
    assert status == 0
    assert "machine: 2 nodes x 2 cores (from options)" in out
    assert "limits: run times (--exact-estimates)" in out
    assert "never fit: 1 jobs ask for more than the machine has" in out
    assert "9 (9 cores, the machine has 4)" in out
    doc = json.loads(out_json.read_text())
    assert [j["id"] for j in doc["jobs"]] == [2, 4]
    assert [j["limit"] for j in doc["jobs"]] == [30.0, 20.0]
    assert doc["never_fit"] == [
        {"id": 9, "procs": 9, "why": "9 cores, the machine has 4"}
    ]
    assert doc["trace"]["window"] == "105:"


def test_skip_malformed_counts_in_the_report(capsys, tmp_path):
    path = write(tmp_path, SMALL + "oops\n")
    status, _, err = cli_replay(capsys, path, "--scheduler", SEED)
    assert status == 2
    assert (
        one_line(err)
        == f"flux-schedkit replay: {path}:12: 1 fields, an SWF record has 18"
    )
    status, out, _ = cli_replay(capsys, path, "--scheduler", SEED, "--skip-malformed")
    assert status == 0
    assert "1 malformed skipped" in out


@pytest.mark.parametrize(
    "text, extra, message",
    [
        ("", [], "the trace is empty"),
        ("; MaxProcs: 4\n", [], "a header but no job records"),
        (SMALL, ["--skip", "3"], "--skip 3 passes over all 3 jobs"),
        (SMALL, ["--window", "500:600"], "no job is submitted in the window"),
        (SMALL.replace("; MaxNodes: 4\n; MaxProcs: 4\n", ""), [], "--nodes"),
    ],
)
def test_input_errors_exit_2_with_one_line(capsys, tmp_path, text, extra, message):
    status, out, err = cli_replay(
        capsys, write(tmp_path, text), "--scheduler", SEED, *extra
    )
    assert status == 2
    assert message in one_line(err)
    assert out == ""


def test_truncated_gzip_exits_2(capsys, tmp_path):
    path = write(tmp_path, SMALL * 50, "t.swf.gz")
    path.write_bytes(path.read_bytes()[:-30])
    status, _, err = cli_replay(capsys, path, "--scheduler", SEED)
    assert status == 2
    assert one_line(err).endswith("t.swf.gz: the gzip file is truncated")


def test_missing_trace_exits_2(capsys, tmp_path):
    status, _, err = cli_replay(capsys, tmp_path / "none.swf", "--scheduler", SEED)
    assert status == 2
    assert "none.swf: No such file or directory" in one_line(err)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--scheduler", SEED, "--scheduler", SEED], "flux-schedkit compare"),
        (["--scheduler", "/nowhere/sched.py"], "no such scheduler module file"),
        (["--scheduler", "no_such_package.sched"], "did not load"),
        (["--scheduler", SEED, "--args", "'unclosed"], "--args"),
        (["--scheduler", SEED, "--json", "/nowhere/r.json"], "does not exist"),
    ],
)
def test_usage_errors_exit_2(capsys, tmp_path, argv, message):
    status, _, err = cli_replay(capsys, write(tmp_path, SMALL), *argv)
    assert status == 2
    assert message in one_line(err)


def test_an_output_never_replaces_the_trace_or_another_output(capsys, tmp_path):
    # --json naming the trace itself once replaced a shared trace with the
    # replay's JSON: every name of the trace (itself, a hard or symbolic
    # link) is refused, as are two outputs naming one file; nothing runs.
    trace = write(tmp_path, SMALL, "t.swf")
    original = trace.read_bytes()
    os.link(trace, tmp_path / "hard.swf")
    os.symlink(trace, tmp_path / "soft.swf")
    for out in ("t.swf", "hard.swf", "soft.swf", "sub/../t.swf"):
        (tmp_path / "sub").mkdir(exist_ok=True)
        status, stdout, err = cli_replay(
            capsys, trace, "--scheduler", SEED, "--json", tmp_path / out
        )
        assert status == 2, out
        assert one_line(err).endswith(": is what this command reads; not overwritten")
        assert stdout == ""
    status, _, err = cli_replay(
        capsys,
        tmp_path / "soft.swf",
        "--scheduler",
        SEED,
        "--json",
        tmp_path / "r.json",
        "--csv",
        tmp_path / "sub" / ".." / "r.json",
    )
    assert status == 2
    assert "named for two outputs" in one_line(err)
    assert trace.read_bytes() == original
    assert not (tmp_path / "r.json").exists()


def test_bad_option_values_are_usage_errors(capsys, tmp_path):
    path = write(tmp_path, SMALL)
    for bad in (["--window", "9:1"], ["--window", "x:"], ["--limit", "0"]):
        status, _, err = cli_replay(capsys, path, "--scheduler", SEED, *bad)
        assert status == 2, bad
        assert "Traceback" not in err


def test_unfinished_jobs_exit_1_and_say_why(capsys, tmp_path):
    module = scheduler_module(tmp_path, "idle", "pass  # never allocates")
    out_json = tmp_path / "r.json"
    status, out, err = cli_replay(
        capsys, write(tmp_path, SMALL), "--scheduler", module, "--json", out_json
    )
    assert status == 1
    assert one_line(err).startswith("flux-schedkit replay: 3 jobs never started")
    assert "3 unfinished" in out
    # The result is still written: it shows which jobs were left.
    assert {j["result"] for j in json.loads(out_json.read_text())["jobs"]} == {
        "pending"
    }


def test_ctrl_c_exits_130(capsys, tmp_path, monkeypatch):
    import replay.runner

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(replay.runner, "replay", interrupted)
    out_json = tmp_path / "r.json"
    status, _, err = cli_replay(
        capsys, write(tmp_path, SMALL), "--scheduler", SEED, "--json", out_json
    )
    assert status == 130
    assert one_line(err) == "flux-schedkit replay: interrupted"
    assert not out_json.exists()


def test_a_closed_pipe_ends_in_one_line_and_status_1(tmp_path):
    # The reader is gone before the first line is written (as `| head -0`).
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "flux_schedkit",
                "replay",
                str(write(tmp_path, SMALL)),
            ]
            + ["--scheduler", SEED],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
    finally:
        os.close(write_end)
    assert proc.returncode == 1
    assert one_line(proc.stderr) == (
        "flux-schedkit replay: output closed early (broken pipe)"
    )


def test_progress_bars_only_on_a_terminal():
    from rich.console import Console

    assert not ProgressBars(console=Console(file=io.StringIO())).shown
    assert not ProgressBars(enabled=False).shown
    screen = io.StringIO()
    terminal = Console(file=screen, force_terminal=True, width=80)
    with ProgressBars(console=terminal) as bars:
        assert bars.shown
        update = bars.add("fifo", 10)
        update(4)
    assert "fifo" in screen.getvalue()
