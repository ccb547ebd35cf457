"""The benchmark scripts as a user runs them: a wrong scheduler name, a
number out of range or a trace that cannot be read ends in one line on
stderr and exit status 2, before anything is timed."""

from __future__ import annotations

import os
import select
import signal
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
        ("instructions.py", ["--schedulers", "minimal", "easy:2"], "easy:2"),
        ("instructions.py", ["--jobs", "1"], "--jobs"),
        ("instructions.py", ["--parallel", "0"], "--parallel"),
        ("instructions.py", ["--tree", "/"], "not a checkout of this project"),
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


# -- instructions.py ------------------------------------------------------------

#: Stands in for valgrind: runs the command it is given as valgrind would
#: (cachegrind's options dropped) and writes to --log-file a count that
#: depends on the job count the command names: 1,000,000 + 1,000 a job.
FAKE_VALGRIND = """\
import subprocess, sys
args = sys.argv[1:]
log = next(a.split("=", 1)[1] for a in args if a.startswith("--log-file="))
first = next(i for i, a in enumerate(args) if not a.startswith("--"))
command = args[first:]  # the program and its arguments
out = subprocess.run(command)
jobs = int(command[command.index("--child") + 3])
with open(log, "w") as f:
    f.write(f"==1== I   refs:      {1_000_000 + 1_000 * jobs:,}\\n")
sys.exit(out.returncode)
"""


def _fake_valgrind(tmp_path) -> str:
    script = tmp_path / "valgrind"
    script.write_text(f"#!{sys.executable}\n" + FAKE_VALGRIND)
    script.chmod(0o755)
    return str(script)


def test_instructions_runs_each_scheduler_twice_and_counts_a_job(tmp_path):
    # The child runs mock_throughput's run_once for real (here without
    # valgrind); the table is the counts' difference over the jobs.
    out = _run(
        "instructions.py",
        *("--valgrind", _fake_valgrind(tmp_path), "--jobs", "11"),
        *("--schedulers", "minimal", "easy", "--nodes", "2", "--cores", "4"),
    )
    assert out.returncode == 0, out.stderr
    rows = [line.split() for line in out.stdout.splitlines()[2:]]
    assert [row[1] for row in rows] == ["minimal", "easy"]
    for row in rows:
        total, startup, a_job = (float(x.replace(",", "")) for x in row[2:5])
        assert (total, startup, a_job) == (1_011_000, 1_001_000, 1_000)
        assert row[5:] == ["1.000x", "1.000x"]


def test_instructions_finds_a_module_named_by_a_relative_path_in_every_tree(
    tmp_path,
):
    # Each run starts in its tree: the path is the same file for all.
    other = tmp_path / "other-tree"
    other.mkdir()
    (other / "benchmarks").symlink_to(ROOT / "benchmarks")
    relative = "tests/mock_broker/schedulers/seed_minimal.py"
    out = _run(
        "instructions.py",
        *("--valgrind", _fake_valgrind(tmp_path), "--jobs", "3"),
        *("--schedulers", relative, "--tree", str(other), "--nodes", "2"),
    )
    assert out.returncode == 0, out.stderr
    rows = [line.split() for line in out.stdout.splitlines()[2:]]
    assert [row[1] for row in rows] == ["seed_minimal.py"] * 2


def test_instructions_names_the_run_that_failed(tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text("raise RuntimeError('no scheduler here')\n")
    out = _run(
        "instructions.py",
        *("--valgrind", _fake_valgrind(tmp_path), "--jobs", "3"),
        *("--schedulers", str(broken)),
    )
    assert out.returncode == 1
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith("instructions: ")
    assert "broken.py" in lines[0] and "no scheduler here" in lines[0]


def test_instructions_without_valgrind_is_one_line(tmp_path):
    out = _run("instructions.py", "--valgrind", str(tmp_path / "valgrind"))
    assert out.returncode == 1
    assert (
        out.stderr
        == f"instructions: {tmp_path / 'valgrind'}: not found (install valgrind)\n"
    )
    assert out.stdout == ""


def test_instructions_reads_cachegrinds_count():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from instructions import instructions_of
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    log = "==9== Cachegrind\n==9== I   refs:      6,116,163,576\n"
    assert instructions_of(log) == 6_116_163_576
    with pytest.raises(ValueError, match="no 'I refs' line"):
        instructions_of("==9== killed\n")


def test_instructions_on_ctrl_c_stops_its_runs_and_exits_130(tmp_path):
    # The runs are in sessions of their own (a terminal's Ctrl-C does not
    # reach them): the script stops them itself.  Each stand-in run holds
    # a FIFO open while it lives: its end is the FIFO's end of file.
    fifo = tmp_path / "runs"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    slow = tmp_path / "valgrind"
    slow.write_text(
        f"#!{sys.executable}\n"
        "import time\n"
        f"held = open({str(fifo)!r}, 'w')\n"
        "held.write('started\\n')\n"
        "held.flush()\n"
        "time.sleep(600)\n"
    )
    slow.chmod(0o755)
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "benchmarks" / "instructions.py")]
        + ["--valgrind", str(slow), "--schedulers", "minimal", "--parallel", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        start_new_session=True,
        # A Python started from a background job ignores SIGINT otherwise.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        said = b""
        while said.count(b"started") < 2:
            ready, _, _ = select.select([reader], [], [], 60)
            assert ready, "the runs never started"
            said += os.read(reader, 1024)
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: the script's group
        _, stderr = proc.communicate(timeout=60)
        assert proc.returncode == 130
        assert stderr == "instructions: interrupted\n"
        ready, _, _ = select.select([reader], [], [], 30)
        assert ready and os.read(reader, 1024) == b"", "a run is still alive"
    finally:
        os.close(reader)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
