"""``flux-schedkit conform`` end to end: exit statuses, report, files."""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.clauses import GENERIC_CLAUSES
from flux_schedkit import cli
from flux_schedkit.commands import conform

HERE = Path(__file__).parent
GALLERY = HERE / "gallery"
INPUTS = HERE / "inputs"


def _conform(*argv):
    return cli.main(["conform", "-n", "0", *argv])


def test_correct_module_passes_selected_clauses_and_writes_files(tmp_path, capsys):
    cert, junit = tmp_path / "c.json", tmp_path / "j.xml"
    status = _conform(
        "--scheduler",
        str(GALLERY / "correct_fifo.py"),
        "-k",
        "stats.answers",
        "-k",
        "ready.mode",
        "--certificate",
        str(cert),
        "--junit",
        str(junit),
    )
    out = capsys.readouterr().out
    assert status == 0, out
    # The two selected clauses, and the budget clauses every probe that ran
    # is judged on (a hang or crash is never hidden by a selection).
    wanted = sorted(["ready.mode", "stats.answers", *GENERIC_CLAUSES])
    assert f"{len(wanted)} pass, 0 fail" in out
    data = json.loads(cert.read_text())
    assert data["verdict"] == "pass"
    assert sorted(c["id"] for c in data["clauses"]) == wanted
    assert data["selected"] == wanted
    assert [p["name"] for p in data["probes"]] == [
        "protocol:ready-mode",
        "protocol:stats",
    ]
    assert "<testcase" in junit.read_text()


@pytest.mark.parametrize(
    "module, options, clause, evidence",
    [
        ("correct_fifo.py", ["--policy", "easy"], "policy.easy-backfill", "source:"),
        # A module that cannot load even without its --args is at fault
        # itself: a failed clause with evidence, not a usage error.
        (
            "load_reaches_reactor.py",
            ["--args", "queue-depth=4"],
            "load.reaches-reactor",
            "RuntimeError: site configuration not found",
        ),
    ],
    ids=["policy", "load-fails-even-without-args"],
)
def test_a_failed_clause_exits_1_with_evidence(
    module, options, clause, evidence, capsys
):
    status = _conform("--scheduler", str(GALLERY / module), *options, "-k", clause)
    out = capsys.readouterr().out
    assert status == 1, out
    assert f"FAIL {clause}" in out
    assert evidence in out
    # The kit's report is the output's end: pytest's list of failed tests
    # and its closing count name the kit's own probes (a path inside the
    # kit, "1 failed"), which a reader would take for the module's clauses.
    assert out.rstrip().splitlines()[-1].startswith("wall time "), out
    assert "short test summary" not in out and "suite.py::" not in out, out
    assert not re.search(r"\d+ (failed|passed)", out), out


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["--scheduler", "no/such/file.py"], "No such file"),
        (["--scheduler", str(INPUTS / "syntax_error.py")], "syntax error"),
        (
            ["--scheduler", str(INPUTS / "import_error.py")],
            "flux_schedkit_no_such_package",
        ),
        (["--scheduler", "no_such_package_xyz.mod"], "no_such_package_xyz"),
        (["--scheduler", "nosuchreference"], "nosuchreference"),
        (
            ["--scheduler", str(GALLERY / "correct_fifo.py"), "-k", "no.such.clause"],
            "matches no clause",
        ),
        (
            ["--scheduler", str(GALLERY / "correct_fifo.py"), "--examples", "0"],
            "--examples",
        ),
    ],
)
def test_usage_and_input_errors_exit_2_in_one_line(argv, needle, capsys):
    status = _conform(*argv)
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert status == 2, text
    assert needle in text
    assert "Traceback" not in text


def test_arguments_the_module_refuses_exit_2_in_one_line_before_any_clause(capsys):
    # As `run` does: the module loads without them, so they are the user's
    # input error, not a clause the module fails.
    status = _conform(
        "--scheduler",
        str(GALLERY / "correct_fifo.py"),
        "--args",
        "queue-depth=0",
        "-k",
        "stats.answers",
    )
    captured = capsys.readouterr()
    assert status == 2, captured.out + captured.err
    [line] = [line for line in captured.err.splitlines() if line.strip()]
    assert line == (
        "flux-schedkit conform: --args: the module refuses them: correct_fifo: "
        "queue-depth='0' "
        "is invalid: expected a positive integer or 'unlimited'"
    )
    assert captured.err == line + "\n"  # nothing else, no empty line
    assert "flux-schedkit conformance" not in captured.out  # no clause ran
    assert "stats.answers" not in captured.out


def test_bad_policy_is_a_usage_error(capsys):
    assert cli.main(["conform", "--policy", "lottery"]) == 2
    assert "lottery" in capsys.readouterr().err


def test_pytest_exit_codes_map_to_documented_statuses():
    assert [conform._status(c) for c in (0, 1, 2, 3, 4, 5)] == [0, 1, 130, 1, 2, 2]


# The kit's test module stops importing, as a broken installation would
# leave it: the name it imports from conformance.findings is taken away.
_BROKEN_KIT = """
import conformance.findings, conformance.plugin, conformance.report
import conformance.runner, conformance.certificate, conformance.probes, conformance.worker
del conformance.findings.FAIL
from flux_schedkit.cli import main
raise SystemExit(main(["conform", "-n", "0", "--scheduler", {module!r}, "-k", "ready.mode"]))
"""


def test_a_kit_that_cannot_collect_its_probes_says_so_and_exits_1(tmp_path):
    # pytest calls a collection error an interrupt: the command said
    # "interrupted" and exited 130, as if the user had pressed Ctrl-C.
    module = str(GALLERY / "correct_fifo.py")
    proc = subprocess.run(
        [sys.executable, "-c", _BROKEN_KIT.format(module=module)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert (
        "flux-schedkit conformance: the kit could not collect its probes: "
        "ImportError: cannot import name 'FAIL'"
    ) in proc.stdout
    assert "interrupted" not in proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr


def test_a_users_test_file_that_cannot_be_collected_is_pytests_to_report(tmp_path):
    # Beside the kit in plain pytest, the user's own broken test file is an
    # ordinary collection error, not the kit's.
    (tmp_path / "test_own.py").write_text("import no_such_module_xyz\n")
    proc = _plain_pytest(tmp_path, "ready.mode", "test_own.py")
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, proc.stdout + proc.stderr
    assert "no_such_module_xyz" in proc.stdout
    assert "the kit could not collect" not in proc.stdout


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["INT", "TERM"])
def test_ctrl_c_ends_the_run_with_130_and_no_traceback(tmp_path, sig):
    """Ctrl-C (SIGINT to the group), and SIGTERM to the kit alone (what
    ``timeout`` sends): the same end, and the worker's folder is removed."""
    # The scheduler writes to a FIFO when it is stuck; select() waits for
    # that (bounded), so the interrupt lands while the scheduler sleeps.
    marker = tmp_path / "stuck"
    os.mkfifo(marker)
    reader = os.open(marker, os.O_RDONLY | os.O_NONBLOCK)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = dict(os.environ, SCHEDKIT_TEST_MARKER=str(marker), TMPDIR=str(scratch))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "flux_schedkit.cli",
            "conform",
            "-n",
            "0",
            "--scheduler",
            str(INPUTS / "waits_for_interrupt.py"),
            # Budgets far beyond the test's own waits: on a loaded machine
            # the probe's default 10 s can run out before the interrupt.
            "--callback-budget",
            "600",
            "--probe-budget",
            "600",
            "-k",
            "stats.answers",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        start_new_session=True,
        # A shell's background job ignores SIGINT, and a Python started so
        # never turns it into KeyboardInterrupt: give the kit the default.
        preexec_fn=_default_sigint,
        text=True,
    )
    try:
        ready, _, _ = select.select([reader], [], [], 120)
        assert ready, "the scheduler never got stuck"
        if sig == signal.SIGINT:
            os.killpg(proc.pid, signal.SIGINT)
        else:
            proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        os.close(reader)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, out + err
    assert "Traceback" not in out + err
    assert err == "flux-schedkit conform: interrupted\n"
    # The kit says it was interrupted; pytest's banner (a "!!! Keyboard
    # Interrupt !!!" rule and a location inside the kit) is not shown.
    assert "interrupted after 0 probes; no verdict, no certificate" in out
    for banner in ("KeyboardInterrupt", "!!!", "--full-trace", "runner.py"):
        assert banner not in out, out
    assert not list(scratch.glob("schedkit-worker-*")), "the worker's folder is left"


def _plain_pytest(cwd: Path, clause: str, *more: str) -> subprocess.CompletedProcess:
    """pytest alone with the kit's plugin on the correct module, judging
    *clause*, with *more* arguments."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "--scheduler",
            str(GALLERY / "correct_fifo.py"),
            "--schedkit-clause",
            clause,
            *more,
        ],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _plain_pytest_on_stats(cwd: Path, certificate: Path) -> subprocess.CompletedProcess:
    """The correct module's stats.answers, the certificate written to
    *certificate*."""
    return _plain_pytest(cwd, "stats.answers", f"--schedkit-certificate={certificate}")


def test_plain_pytest_with_the_plugin_certifies_a_module(tmp_path):
    # Another project's CI: `pip install flux-schedkit`, then pytest alone
    # (the plugin comes from the pytest11 entry point).
    proc = _plain_pytest_on_stats(tmp_path, tmp_path / "c.json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "flux-schedkit conformance" in proc.stdout
    assert "stats.answers" in proc.stdout
    assert json.loads((tmp_path / "c.json").read_text())["verdict"] == "pass"


def test_plain_pytest_without_scheduler_is_untouched(tmp_path):
    (tmp_path / "test_own.py").write_text("def test_own():\n    assert True\n")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed" in proc.stdout
    assert "flux-schedkit conformance" not in proc.stdout


@pytest.mark.parametrize(
    "argv, said",
    [
        (["-k", "nosuchclause"], "--clause 'nosuchclause' matches no clause"),
        (["--args", 'a "b'], "--args: No closing quotation"),
        (
            ["--certificate", "{tmp}/missing/c.json"],
            "folder {tmp}/missing does not exist",
        ),
        (["--junit", "{tmp}/missing/j.xml"], "folder {tmp}/missing does not exist"),
    ],
    ids=["clause", "args", "certificate", "junit"],
)
def test_what_holds_for_every_scheduler_is_refused_once_before_any_runs(
    argv, said, tmp_path, capsys
):
    # Without --scheduler the three reference schedulers would run in turn:
    # a mistake they share is told once, before any probe (a certificate
    # folder that is missing used to end the first run in a traceback).
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    assert _conform(*argv) == conform.EXIT_USAGE
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("flux-schedkit conform: ")
    assert said.replace("{tmp}", str(tmp_path)) in lines[0]


@pytest.mark.parametrize(
    "argv",
    [
        ["-n", "abc"],
        ["-n", "-2"],
        ["--probe-budget", "0"],
        ["--callback-budget", "inf"],
    ],
)
def test_workers_and_budgets_are_checked_by_their_types(argv, capsys):
    # A zero, negative or infinite budget would let a hanging scheduler
    # hang the kit, or fail every probe.
    assert cli.main(["conform", *argv]) == conform.EXIT_USAGE
    captured = capsys.readouterr()
    assert captured.out == ""
    last = captured.err.strip().splitlines()[-1]
    assert "error: argument" in last and argv[0] in last, captured.err


def test_a_certificate_that_cannot_be_written_fails_the_run_in_one_line(tmp_path):
    # The plugin alone (plain pytest), which has no up-front check: the
    # write fails after the verdict, said in the summary, exit status 1.
    proc = _plain_pytest_on_stats(tmp_path, tmp_path / "missing" / "c.json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    out = proc.stdout + proc.stderr
    assert (
        f"cannot write the certificate {tmp_path}/missing/c.json: "
        "No such file or directory" in proc.stdout
    )
    assert "Traceback" not in out and "INTERNALERROR" not in out


def test_the_certificate_never_replaces_the_module_it_certifies(tmp_path, capsys):
    module = tmp_path / "mine.py"
    module.write_text((GALLERY / "correct_fifo.py").read_text())
    original = module.read_bytes()
    status = _conform("--scheduler", str(module), "--certificate", str(module))
    assert status == conform.EXIT_USAGE
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"flux-schedkit conform: {module}: is what this command reads; not overwritten\n"
    )
    assert module.read_bytes() == original


_WANDERER = '''
"""The gallery FIFO, but it takes any argument and leaves its folder."""
import os
import sys

sys.path.insert(0, {gallery!r})
from _base import GalleryFifo  # noqa: E402


class Wanderer(GalleryFifo):
    def __init__(self, h, *args):
        super().__init__(h)
        self.given = args

    def schedule(self):
        os.chdir({away!r})
        super().schedule()


def mod_main(h, *args):
    Wanderer(h, *args).run()
'''


def test_a_relative_module_path_survives_the_module_changing_folder(
    tmp_path, monkeypatch, capsys
):
    # The module's os.chdir lasts in the worker that runs the next probe;
    # the path was relative to the folder the command started in.
    (tmp_path / "away").mkdir()
    text = _WANDERER.format(gallery=str(GALLERY), away=str(tmp_path / "away"))
    (tmp_path / "wanderer.py").write_text(text)
    monkeypatch.chdir(tmp_path)
    status = _conform("--scheduler=wanderer.py", "-k", "alloc")
    out = capsys.readouterr().out
    assert status == 0, out
    assert "0 fail" in out


@pytest.mark.parametrize("value", ["-x", "--help", "-p no:foo"])
def test_module_arguments_that_look_like_options_reach_the_module(
    value, tmp_path, capsys
):
    text = _WANDERER.format(gallery=str(GALLERY), away=str(tmp_path))
    (tmp_path / "anyargs.py").write_text(text)
    status = _conform(
        f"--scheduler={tmp_path / 'anyargs.py'}",
        f"--args={value}",
        "-k",
        "stats.answers",
    )
    captured = capsys.readouterr()
    assert status == 0, captured.out + captured.err
    assert "0 fail" in captured.out and "usage" not in captured.err


def test_a_probe_lost_with_its_test_process_fails_the_run(tmp_path, capsys):
    """The module kills the xdist worker running its probe: the probe never
    reports, and the run says so as a failure of robust.no-crash in the
    summary, the certificate and JUnit, instead of passing what ran."""
    cert, junit = tmp_path / "c.json", tmp_path / "j.xml"
    argv = ["conform", "--scheduler", str(INPUTS / "kills_its_grandparent.py")]
    argv += ["-n", "1", "-k", "hello.running-jobs"]
    argv += ["--certificate", str(cert), "--junit", str(junit)]
    status = cli.main(argv)
    out = capsys.readouterr().out
    assert status == 1, out
    assert "0 pass, 1 fail" in out and "-> FAIL" in out
    data = json.loads(cert.read_text())
    assert data["verdict"] == "fail"
    [crash] = [c for c in data["clauses"] if c["id"] == "robust.no-crash"]
    assert crash["verdict"] == "fail"
    [evidence] = crash["evidence"]
    assert evidence["probe"] == "scenario:hello-running-jobs"
    assert "did not complete" in evidence["text"]
    assert "crashed while running" in evidence["text"]
    assert 'failures="1"' in junit.read_text()
