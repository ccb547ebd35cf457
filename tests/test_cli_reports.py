"""What every ``flux-schedkit`` subcommand does with a closed pipe, a Ctrl-C
inside a scheduler callback, and a scheduler that raises."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
RAISING = HERE / "mock_broker" / "schedulers" / "raising.py"
SEED = HERE / "mock_broker" / "schedulers" / "seed_minimal.py"
SMALL_TRACE = """\
; MaxNodes: 4
; MaxProcs: 4
    1   100   0   50   2  -1 -1   2   60  -1 1 7 7 -1 -1 -1 -1 -1
    2   110   0   30   4  -1 -1   4  100  -1 1 8 8 -1 -1 -1 -1 -1
"""


def schedkit(*argv: str, stdout=subprocess.PIPE) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "flux_schedkit", *argv],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
        timeout=300,
    )


def conform_one_clause(cls: str, certificate: Path) -> subprocess.CompletedProcess:
    """``conform`` of a raising.py class on one clause that submits jobs."""
    return schedkit(
        "conform",
        "-n",
        "0",
        "--scheduler",
        f"{RAISING}:{cls}",
        "-k",
        "cancel.answered-once",
        "--certificate",
        str(certificate),
    )


def line_of(text: str) -> int:
    lines = RAISING.read_text().splitlines()
    return next(n for n, line in enumerate(lines, 1) if text in line)


def with_closed_stdout(*argv: str) -> subprocess.CompletedProcess:
    """Run with stdout a pipe whose reader is already gone (``| head -0``)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return schedkit(*argv, stdout=write_end)
    finally:
        os.close(write_end)


@pytest.mark.parametrize(
    "argv",
    [
        ["clauses"],
        ["clauses", "--rst"],
        ["version"],
        ["path", "fifo"],
        ["scenarios"],
        ["site-config", "--print", "{tmp}"],
        ["run", "--scheduler", str(SEED), "cancel-pending-job"],
    ],
    ids=lambda argv: " ".join(argv[:2]),
)
def test_a_closed_pipe_is_status_1_and_one_line_for_every_command(argv, tmp_path):
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    proc = with_closed_stdout(*argv)
    assert proc.returncode == 1, proc.stderr
    assert (
        proc.stderr == f"flux-schedkit {argv[0]}: output closed early (broken pipe)\n"
    )


@pytest.mark.parametrize(
    "argv, prog",
    [
        (["--help"], "flux-schedkit"),
        (["conform", "--help"], "flux-schedkit conform"),
        (["run", "-h"], "flux-schedkit run"),
    ],
    ids=["--help", "conform --help", "run -h"],
)
def test_help_into_a_closed_pipe_is_status_1_and_one_line(argv, prog):
    # argparse drops the write error: this used to end with status 0.
    proc = with_closed_stdout(*argv)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == f"{prog}: output closed early (broken pipe)\n"


def test_help_read_in_full_is_status_0():
    proc = schedkit("conform", "--help")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: flux-schedkit conform")
    assert proc.stderr == ""


def test_ctrl_c_inside_a_callback_ends_run_as_an_interrupt():
    proc = schedkit(
        "run", "--scheduler", f"{RAISING}:InterruptedInSchedule", "cancel-pending-job"
    )
    assert proc.returncode == 130, proc.stdout + proc.stderr
    assert proc.stderr == "flux-schedkit run: interrupted\n"
    assert "module exited" not in proc.stdout  # nobody is blamed


def test_ctrl_c_stops_run_though_the_module_set_a_sigint_handler(tmp_path):
    # A handler set at import is the module's own process's (until
    # 2026-12-07 it was installed in the host, which then never stopped).
    module = tmp_path / "keeps_sigint.py"
    module.write_text(
        "import os, signal\n"
        "from flux.scheduler import Scheduler\n"
        "signal.signal(signal.SIGINT, lambda signum, frame: None)\n"
        "class Sched(Scheduler):\n"
        "    def schedule(self):\n"
        "        if self._queue:\n"
        "            os.kill(os.getpid(), signal.SIGINT)  # the user's Ctrl-C\n"
        "def mod_main(h, *args):\n"
        "    Sched(h, *args).run()\n"
    )
    proc = schedkit("run", "--scheduler", str(module), "cancel-pending-job")
    assert proc.returncode == 130, proc.stdout + proc.stderr
    assert proc.stderr == "flux-schedkit run: interrupted\n"


def test_a_keyboard_interrupt_the_scheduler_raises_fails_no_crash(tmp_path):
    # The kit's worker ignores SIGINT: a KeyboardInterrupt inside a callback
    # is the module's own exception, not the user's Ctrl-C.
    cert = tmp_path / "c.json"
    proc = conform_one_clause("InterruptedInSchedule", cert)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "interrupted" not in proc.stderr
    assert "FAIL robust.no-crash" in proc.stdout
    assert "KeyboardInterrupt (raised by the scheduler, not a Ctrl-C" in proc.stdout
    assert f'{RAISING}", line {line_of("raise KeyboardInterrupt")}' in proc.stdout
    crash = next(
        c
        for c in json.loads(cert.read_text())["clauses"]
        if c["id"] == "robust.no-crash"
    )
    assert crash["verdict"] == "fail"


def test_conform_locates_the_exception_in_the_report_and_certificate(tmp_path):
    cert = tmp_path / "c.json"
    proc = conform_one_clause("RaisesInAlloc", cert)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    where = f"KeyError: 'queue' at {RAISING}:{line_of('no such key')} in alloc"
    assert where in proc.stdout
    crash = next(
        c
        for c in json.loads(cert.read_text())["clauses"]
        if c["id"] == "robust.no-crash"
    )
    assert crash["verdict"] == "fail"
    assert where in crash["evidence"][0]["text"]
    assert (
        f"line {line_of('no such key')}, in alloc" in crash["evidence"][0]["traceback"]
    )


def test_replay_locates_the_exception(tmp_path):
    trace = tmp_path / "small.swf"
    trace.write_text(SMALL_TRACE)
    proc = schedkit(
        "replay", "--scheduler", f"{RAISING}:RaisesBelowItsOwnCode", str(trace)
    )
    assert proc.returncode == 1
    assert (
        "the scheduler module exited during the replay: JSONDecodeError: "
        in proc.stderr
    )
    assert f" at {RAISING}:{line_of('json.loads')} in schedule\n" in proc.stderr


def test_run_locates_the_exception():
    proc = schedkit(
        "run", "-q", "--scheduler", f"{RAISING}:RaisesInAlloc", "cancel-pending-job"
    )
    assert proc.returncode == 1
    assert f"KeyError: 'queue' at {RAISING}:{line_of('no such key')} in alloc" in (
        proc.stdout
    )


def test_run_takes_a_reference_scheduler_by_name():
    # As conform and replay do: `--scheduler=fifo` is schedkit-fifo.
    proc = schedkit("run", "-q", "--scheduler", "fifo", "cancel-pending-job")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("PASS  cancel-pending-job")
