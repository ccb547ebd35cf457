"""SWF traces: reading them, and replaying them on the mock broker."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from flux_schedkit import cli
from mock_broker.machine import Machine
from replay.runner import replay
from replay.swf import SWFError, read_swf

SCHEDULERS = Path(__file__).parent / "schedulers"
SEED = str(SCHEDULERS / "seed_minimal.py")
TRACES = Path(__file__).resolve().parents[2].parent / "shared" / "traces"
KTH = TRACES / "KTH-SP2-1996-2.1-cln.swf.gz"

SMALL = """\
; Version: 2.2
; MaxProcs: 4
; Note: a hand-made trace
    1   100   0   50   2  -1 -1   2   60  -1 1 7 7 -1 -1 -1 -1 -1
    2   110   0   30  -1  -1 -1   4  100  -1 1 8 8 -1 -1 -1 -1 -1
    3   120   0   -1   1  -1 -1   1   10  -1 0 9 9 -1 -1 -1 -1 -1
    4   130   0   20   3  -1 -1  -1   -1  -1 1 9 9 -1 -1 -1 -1 -1
"""


def write(tmp_path, text, name="t.swf"):
    path = tmp_path / name
    if name.endswith(".gz"):
        with gzip.open(path, "wt") as fh:
            fh.write(text)
    else:
        path.write_text(text)
    return path


@pytest.mark.parametrize("name", ["t.swf", "t.swf.gz"])
def test_read_header_jobs_and_fallbacks(tmp_path, name):
    trace = read_swf(write(tmp_path, SMALL, name))
    assert trace.max_procs == 4
    assert trace.header["Note"] == "a hand-made trace"
    # Job 3 has an unknown run time and cannot be replayed.
    assert [j.job_id for j in trace.jobs] == [1, 2, 4]
    assert trace.skipped == 1
    # Job 4's requested size is unknown: its allocated size stands in; its
    # unknown requested time means no limit.
    assert (trace.jobs[2].procs, trace.jobs[2].requested_time) == (3, 0.0)
    assert (trace.jobs[0].submit, trace.jobs[0].run, trace.jobs[0].user) == (
        100.0,
        50.0,
        7,
    )


def test_limit_and_skip(tmp_path):
    path = write(tmp_path, SMALL)
    assert [j.job_id for j in read_swf(path, limit=2).jobs] == [1, 2]
    assert [j.job_id for j in read_swf(path, skip=1, limit=1).jobs] == [2]


def test_malformed_line_names_file_and_line(tmp_path):
    path = write(tmp_path, SMALL + "5 140 0 zz 1\n")
    with pytest.raises(SWFError, match=r"t\.swf:8: 5 fields"):
        read_swf(path)
    path = write(tmp_path, SMALL + "5 140 0 x 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1\n")
    with pytest.raises(SWFError, match=r"t\.swf:8: could not convert"):
        read_swf(path)


def test_replay_figures_on_a_known_schedule(tmp_path):
    # 4 one-core nodes.  Job 1 (2 procs) runs 100-150; job 2 (4 procs)
    # waits for it: starts at 150 (wait 40), runs 30; job 4 (3 procs)
    # submitted at 130 waits behind job 2 under FIFO: starts at 180.
    trace = read_swf(write(tmp_path, SMALL))
    result, broker = replay(SEED, trace.jobs, Machine.uniform(4, 1), label="seed")
    assert (result.jobs, result.started, result.completed) == (3, 3, 3)
    assert result.violations == []
    waits = sorted(j.t_run - j.t_submit for j in broker.jobs.jobs.values())
    assert waits == [0.0, 40.0, 50.0]
    assert result.mean_wait == pytest.approx(30.0)
    assert result.makespan == pytest.approx(200.0 - 100.0)
    busy = 50 * 2 + 30 * 4 + 20 * 3
    assert result.utilization == pytest.approx(busy / (4 * 100.0))
    broker.close()


def test_replay_is_deterministic(tmp_path):
    trace = read_swf(write(tmp_path, SMALL))
    first, b1 = replay(SEED, trace.jobs, Machine.uniform(4, 1))
    second, b2 = replay(SEED, trace.jobs, Machine.uniform(4, 1))
    assert b1.transcript.to_jsonl() == b2.transcript.to_jsonl()
    b1.close()
    b2.close()


def test_cli_rejects_a_missing_trace(capsys, tmp_path):
    status = cli.main(["replay", str(tmp_path / "none.swf"), "--scheduler", SEED])
    assert status == 2
    assert "none.swf" in capsys.readouterr().err


def test_cli_needs_a_machine_size_without_maxprocs(capsys, tmp_path):
    path = write(tmp_path, SMALL.replace("; MaxProcs: 4\n", ""))
    assert cli.main(["replay", str(path), "--scheduler", SEED]) == 2
    assert "--nodes" in capsys.readouterr().err


def test_cli_prints_one_row_per_scheduler(capsys, tmp_path):
    path = write(tmp_path, SMALL)
    status = cli.main(["replay", str(path), "--scheduler", SEED, "--scheduler", SEED])
    out = capsys.readouterr().out
    assert status == 0
    assert out.count("seed_minimal.py") == 2
    assert "mean wait" in out


@pytest.mark.skipif(not KTH.exists(), reason=f"trace {KTH} is not present")
@pytest.mark.parametrize("policy", ["fifo", "easy", "conservative"])
def test_reference_schedulers_replay_kth_cleanly(policy):
    from flux_schedkit.reference import reference_path

    trace = read_swf(KTH, limit=500)
    result, broker = replay(
        str(reference_path(policy)), trace.jobs, Machine.uniform(100, 1)
    )
    assert result.violations == []
    assert result.unfinished == 0
    assert result.started == 500
    broker.close()


@pytest.mark.skipif(not KTH.exists(), reason=f"trace {KTH} is not present")
def test_backfilling_waits_less_than_fifo_on_kth():
    from flux_schedkit.reference import reference_path

    trace = read_swf(KTH, limit=300)
    waits = {}
    for policy in ("fifo", "easy"):
        result, broker = replay(
            str(reference_path(policy)), trace.jobs, Machine.uniform(100, 1)
        )
        waits[policy] = result.mean_wait
        broker.close()
    assert waits["easy"] < waits["fifo"] / 2
