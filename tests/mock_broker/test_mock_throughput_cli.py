"""``benchmarks/mock_throughput.py`` as a user runs it: any scheduler module
file beside the reference ones, and one-line failures with their exit
statuses (rates are measured there, never asserted here)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]
SCRIPT = ROOT / "benchmarks" / "mock_throughput.py"
MINIMAL = ROOT / "tests" / "mock_broker" / "schedulers" / "seed_minimal.py"


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--jobs", "40", "--repeat", "1", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )


def test_a_module_file_runs_beside_the_reference_schedulers(tmp_path):
    mine = tmp_path / "my_sched.py"
    mine.write_text(MINIMAL.read_text())
    out = _run("--schedulers", "minimal", "fifo", "conservative", str(mine))
    assert out.returncode == 0, out.stderr
    # A row is printed only once every job of every run completed cleanly.
    rows = {line.split()[0]: line.split() for line in out.stdout.splitlines()[2:]}
    assert set(rows) == {"minimal", "fifo", "conservative", "my_sched.py"}
    assert rows["minimal"][5] == "1.00x"  # the base of the ratios
    assert all(float(row[2]) > 0 and row[5].endswith("x") for row in rows.values())
    # reservation_moves, from the statistics of the schedulers that keep
    # reservations; "-" for the others.
    assert rows["conservative"][8].isdigit()
    assert [rows[name][8] for name in ("minimal", "fifo", "my_sched.py")] == ["-"] * 3
    # Each run's process CPU time, the module's thread included.
    assert all(float(row[9]) > 0 for row in rows.values())


def test_an_unknown_name_or_a_missing_file_fails_before_any_run(tmp_path):
    for name, said in (
        ("fifoo", "unknown scheduler 'fifoo'"),
        (str(tmp_path / "none.py"), "none.py: no such file"),
    ):
        out = _run("--schedulers", "minimal", name)
        assert out.returncode == 2
        assert said in out.stderr.strip().splitlines()[-1]
        assert out.stdout == ""


def test_a_module_that_cannot_load_fails_in_one_line(tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text("def mod_main(h, *args):\n    raise RuntimeError('no way')\n")
    out = _run("--schedulers", str(broken))
    assert out.returncode == 1
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"mock_throughput: {broken}: cannot load"
    ), out.stderr


def test_a_module_that_drops_jobs_fails_in_one_line(tmp_path):
    idle = tmp_path / "idle.py"
    idle.write_text(
        "from flux.scheduler import Scheduler\n\n\n"
        "class Idle(Scheduler):\n"
        "    def schedule(self):\n"
        "        pass\n\n\n"
        "def mod_main(h, *args):\n"
        "    Idle(h, *args).run()\n"
    )
    out = _run("--schedulers", str(idle))
    assert out.returncode == 1
    lines = out.stderr.strip().splitlines()
    assert lines == [f"mock_throughput: {idle}: only 0 of 40 jobs completed"]


def test_output_closed_early_ends_in_one_line():
    proc = subprocess.Popen(
        [sys.executable, str(SCRIPT), "--jobs", "40", "--repeat", "1"]
        + ["--schedulers", "minimal", "fifo"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        text=True,
    )
    proc.stdout.close()  # as `| head -0` does
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 1
    assert err.strip().splitlines() == [
        "mock_throughput: output closed early (broken pipe)"
    ]
