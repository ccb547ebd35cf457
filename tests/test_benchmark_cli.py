"""The benchmark scripts as a user runs them: a wrong scheduler name, a
number out of range or a trace that cannot be read ends in one line on
stderr and exit status 2, before anything is timed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]


def _run(script: str, *args: str) -> subprocess.CompletedProcess:
    # sched_pass.py reads sched-backfill's path from the environment too.
    env = {k: v for k, v in os.environ.items() if k != "SCHEDKIT_UPSTREAM_BACKFILL"}
    return subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
    )


@pytest.mark.parametrize(
    "script", ["textbook_match.py", "kth_fcfs.py", "sched_pass.py"]
)
def test_a_trace_that_cannot_be_read_is_one_line(script, tmp_path):
    bad = tmp_path / "bad.swf"
    bad.write_text("1 2 3\n")
    for trace, said in (
        (tmp_path / "none.swf", "none.swf: No such file or directory"),
        (tmp_path, "is a directory, not a trace"),
        (bad, "bad.swf:1: 3 fields, an SWF record has 18"),
    ):
        out = _run(script, "--trace", str(trace))
        assert out.returncode == 2, out.stderr
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and said in lines[0], out.stderr
        assert lines[0].startswith(script.removesuffix(".py") + ": ")


@pytest.mark.parametrize(
    "script, args",
    [
        ("textbook_match.py", ["--schedulers", "easy", "fifoo"]),
        ("textbook_match.py", ["--schedulers", "conservative:0"]),
        ("textbook_match.py", ["--schedulers", "easy:4"]),
        ("kth_fcfs.py", ["--scheduler", "fifoo"]),
        ("sched_pass.py", ["--schedulers", "easy", "easy:3"]),
        ("sched_pass.py", ["--schedulers", "conservative:x"]),
    ],
)
def test_an_unknown_scheduler_fails_at_once(script, args, tmp_path):
    out = _run(script, "--trace", str(tmp_path / "none.swf"), *args)
    assert out.returncode == 2
    assert out.stdout == ""
    last = out.stderr.strip().splitlines()[-1]
    assert "error:" in last and args[-1] in last and "Traceback" not in out.stderr


@pytest.mark.parametrize(
    "script, args, named",
    [
        (
            "mock_throughput.py",
            ["--schedulers", "fifo", "conservative:0"],
            "conservative:0",
        ),
        ("mock_throughput.py", ["--jobs", "2000", "0"], "--jobs"),
        ("mock_throughput.py", ["--nodes", "0"], "--nodes"),
        ("mock_throughput.py", ["--cores", "-4"], "--cores"),
        ("mock_throughput.py", ["--repeat", "0"], "--repeat"),
        ("mock_throughput.py", ["--load", "nan"], "--load"),
        ("sched_pass.py", ["--pending", "1000", "-5"], "--pending"),
        ("sched_pass.py", ["--passes", "0"], "--passes"),
        ("split_pool_alloc.py", ["--skip", "-1"], "--skip"),
        ("textbook_match.py", ["--nodes", "0"], "--nodes"),
        ("textbook_match.py", ["--cores-per-node", "0"], "--cores-per-node"),
        ("real_flux_schedbench.py", ["--depth", "8", "0"], "--depth"),
        ("real_flux_schedbench.py", ["--rounds", "0"], "--rounds"),
    ],
)
def test_a_wrong_argument_is_named_before_anything_runs(script, args, named):
    out = _run(script, *args)
    assert out.returncode == 2
    assert out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert "error:" in lines[-1] and named in lines[-1], out.stderr
    assert "Traceback" not in out.stderr


def test_sched_backfill_needs_a_usable_upstream_file(tmp_path):
    # Named without --upstream, or given a file that is not flux-core's
    # sched-backfill.py: one line, before the trace is read or anything runs.
    other = tmp_path / "other.py"
    other.write_text("x = 1\n")
    for args, said in (
        (["--schedulers", "easy", "sched-backfill"], "sched-backfill needs --upstream"),
        (["--upstream", str(tmp_path / "none.py")], "none.py: no such file"),
        (["--upstream", str(other)], "other.py: not flux-core's sched-backfill.py"),
    ):
        out = _run("sched_pass.py", "--trace", str(tmp_path / "none.swf"), *args)
        assert out.returncode == 2, out.stderr
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and said in lines[0], out.stderr
        assert out.stdout == ""


def test_textbook_match_refuses_a_machine_smaller_than_a_job():
    # The replay and the model would no longer compare job for job.
    out = _run("textbook_match.py", "--nodes", "3", "--limit", "50")
    assert out.returncode == 2
    assert out.stdout == ""
    assert (
        out.stderr
        == "textbook_match: --nodes 3: the trace has a job of 36 processors\n"
    )


def test_textbook_match_needs_whole_nodes():
    out = _run(
        "textbook_match.py", "--nodes", "100", "--cores-per-node", "16", "--limit", "5"
    )
    assert out.returncode == 2
    assert out.stdout == ""
    assert out.stderr == (
        "textbook_match: --nodes 100 is not a multiple of --cores-per-node 16\n"
    )


CURIE = ROOT.parent / "shared" / "traces" / "CEA-Curie-2011-2.1-cln-b2.swf.gz"


@pytest.mark.skipif(not CURIE.exists(), reason=f"{CURIE} is absent")
def test_textbook_match_on_curie_in_whole_nodes():
    # 5,832 nodes of 16 cores; each job takes the whole nodes its
    # processors fill, and the model counts nodes.
    out = _run(
        "textbook_match.py",
        *("--trace", str(CURIE), "--limit", "300", "--nodes", "93312"),
        *("--cores-per-node", "16", "--whole-nodes", "--schedulers", "conservative"),
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].endswith(": 300 jobs on 5832 x 16 cores, whole nodes")
    assert lines[2].split()[:3] == ["conservative", "300", "300"]
    assert lines[2].endswith("none")
