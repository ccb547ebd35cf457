"""``benchmarks/textbook_match.py`` and ``benchmarks/kth_fcfs.py`` as a
user runs them: a wrong scheduler name or a trace that cannot be read ends
in one line on stderr and exit status 2, before any replay."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]


def _run(script: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )


@pytest.mark.parametrize("script", ["textbook_match.py", "kth_fcfs.py"])
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
    ],
)
def test_an_unknown_scheduler_fails_at_once(script, args, tmp_path):
    out = _run(script, "--trace", str(tmp_path / "none.swf"), *args)
    assert out.returncode == 2
    assert out.stdout == ""
    last = out.stderr.strip().splitlines()[-1]
    assert "error:" in last and args[-1] in last and "Traceback" not in out.stderr
