"""The isolation runner: hostile modules fail their generic clause with
evidence, the kit survives and goes on, and nothing is left behind.

Budgets are small so the hung modules end quickly; no test asserts on
wall times.
"""

from __future__ import annotations

import ast
import dataclasses
import os
import re
import select
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from gallery_modules import module_file

from conformance.clauses import GENERIC_CLAUSES
from conformance.findings import FAIL, PASS
from conformance.probes import execute
from conformance.runner import Budgets, Runner, preflight

INPUTS = Path(__file__).parent / "inputs"
GALLERY = Path(__file__).parent / "gallery"
MOCK_SCHEDULERS = Path(__file__).parent.parent / "mock_broker" / "schedulers"
#: A library scenario: a job runs, a second one waits and is cancelled.
PROBE = "scenario:cancel-pending-job"
#: A scenario with no cancel and no job left waiting once it is over.
OTHER = "scenario:hello-running-jobs"
BUDGETS = Budgets(
    probe_wall=10.0, callback_wall=1.0, messages_per_instant=2000, memory_mb=768
)


def _declared_clause(path: Path):
    for node in ast.parse(path.read_text()).body:
        if (
            isinstance(node, ast.Assign)
            and getattr(node.targets[0], "id", "") == "CLAUSE"
        ):
            return ast.literal_eval(node.value)
    raise AssertionError(f"{path.name} declares no CLAUSE")


def _children() -> list[str]:
    """This process's child processes, zombies included (from /proc)."""
    me, out = str(os.getpid()), []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/status") as f:
                fields = dict(line.split(":", 1) for line in f if ":" in line)
        except OSError:
            continue
        if fields.get("PPid", "").strip() == me:
            out.append(f"{entry.name} {fields.get('State', '').strip()}")
    return out


@pytest.fixture(autouse=True)
def no_children_left():
    if not os.path.isdir("/proc"):
        pytest.skip("needs /proc")
    before = set(_children())
    yield
    assert set(_children()) <= before, "a child process was left behind"


def _verdicts(outcome) -> dict[str, str]:
    return {f.clause: f.verdict for f in outcome.findings}


# -- a correct module ---------------------------------------------------------------


def test_correct_fifo_passes_every_generic_clause_in_one_child():
    pids = set()
    with Runner(str(GALLERY / "correct_fifo.py"), [], budgets=BUDGETS) as runner:
        for probe in (PROBE, OTHER, "scenario:deny-infeasible"):
            outcome = runner.run(probe)
            verdicts = _verdicts(outcome)
            for clause in GENERIC_CLAUSES:
                assert verdicts.get(clause) == PASS, (probe, clause)
            assert FAIL not in verdicts.values(), outcome.findings
            assert outcome.probe == probe
            pids.add(outcome.stats["isolation"]["pid"])
    assert len(pids) == 1, "the child is reused across probes"


def test_a_scheduler_that_keeps_its_accounting_in_sqlite_passes():
    # A connection opened in mod_main is used in every alloc, as flux-core
    # allows (one thread runs both).  Until 2026-12-07 the callbacks ran on
    # another thread than mod_main: ProgrammingError at the first alloc,
    # robust.no-crash and every clause the probe judges failed.
    module = MOCK_SCHEDULERS / "main_thread_idioms.py"
    with Runner(f"{module}:ThreadAffineScheduler", [], budgets=BUDGETS) as runner:
        outcome = runner.run(PROBE)
    verdicts = _verdicts(outcome)
    assert verdicts["robust.no-crash"] == PASS
    assert FAIL not in verdicts.values(), outcome.findings


def test_a_scheduler_that_prints_does_not_disturb_the_protocol(tmp_path):
    module = tmp_path / "noisy.py"
    module.write_text(
        textwrap.dedent(
            f"""
            import os, sys
            sys.path.insert(0, {str(GALLERY)!r})
            from _base import GalleryFifo

            print('{{"type": "result", "id": 1}}')
            os.write(1, b"raw bytes on fd 1\\n")

            class Noisy(GalleryFifo):
                def schedule(self):
                    print("scheduling", len(self._queue), file=sys.stderr)
                    print('{{"findings": []}}')
                    super().schedule()

            def mod_main(h, *args):
                Noisy(h, *args).run()
            """
        )
    )
    with Runner(str(module), [], budgets=BUDGETS) as runner:
        verdicts = _verdicts(runner.run(PROBE))
    assert all(verdicts[c] == PASS for c in GENERIC_CLAUSES)
    assert FAIL not in verdicts.values()


# -- hostile modules ------------------------------------------------------------------

#: (gallery module, clause, the failure stands alone, evidence needles)
HOSTILE = [
    ("busy_loop_schedule", "callbacks.prompt", True, ["busy_loop_schedule.py:2", "while self._queue"]),
    ("sleep_in_callback", "callbacks.prompt", True, ["sleep_in_callback.py:2", "time.sleep(1000)", "sched.alloc"]),
    ("loop_at_import", "robust.no-hang", True, ["loop_at_import.py:", " in <module>", "loading"]),
    ("stray_thread", "robust.no-stray-threads", True, ["'queue-stats'", "stray_thread.py:2", "_poll_forever"]),
    ("os_exit_callback", "robust.no-crash", True, ["exit code 3", "os_exit_callback.py:", "os._exit(3)"]),
    ("sys_exit_callback", "robust.no-crash", False, ["SystemExit: 2", "sys_exit_callback.py\", line", "sys.exit(2)"]),
    ("segfault_callback", "robust.no-crash", True, ["SIGSEGV", "segfault_callback.py:2", "Segmentation fault"]),
    ("sigkill_self", "robust.no-crash", True, ["SIGKILL", "sigkill_self.py:2", "os.kill(os.getpid(), signal.SIGKILL)"]),
    ("memory_hog", "robust.memory", True, ["MemoryError", "768 MiB", "memory_hog.py\", line", "bytes(64"]),
    ("livelock_zero_timer", "robust.no-livelock", True, ["without the clock moving (limit 2000)", "reason_pending"]),
    ("livelock_timer_loop", "robust.no-livelock", True, ["in one reactor iteration", "limit 2000", "reason_pending"]),
    ("raise_in_callback", "robust.no-crash", False, ["KeyError", "raise_in_callback.py\", line 2", "return waiting["]),
    ("keyboard_interrupt_callback", "robust.no-crash", True, ["KeyboardInterrupt", "keyboard_interrupt_callback.py\", line 2", "raise KeyboardInterrupt", "not a Ctrl-C"]),
]  # fmt: skip


@pytest.mark.parametrize(
    "module, clause, alone, needles", HOSTILE, ids=[h[0] for h in HOSTILE]
)
def test_a_hostile_module_fails_its_clause_with_evidence(
    module, clause, alone, needles
):
    path = GALLERY / f"{module}.py"
    assert _declared_clause(path) == clause
    with Runner(str(path), [], budgets=BUDGETS) as runner:
        outcome = runner.run(PROBE)
    failed = [f for f in outcome.findings if f.clause == clause and f.verdict == FAIL]
    assert failed, outcome.findings
    evidence = failed[0].evidence
    assert evidence.probe == PROBE and evidence.text
    blob = "\n".join((evidence.text, evidence.traceback, evidence.excerpt))
    for needle in needles:
        assert needle in blob, f"{needle!r} not in the evidence:\n{blob}"
    if alone:  # a tripped budget: the probe's other clauses get no verdict
        assert [f.clause for f in outcome.findings] == [clause]
    else:  # the module exited inside a sound worker: the budgets held
        verdicts = _verdicts(outcome)
        assert all(verdicts[c] == PASS for c in GENERIC_CLAUSES if c != clause)


def test_a_mod_main_that_never_reaches_its_reactor_is_a_hang(tmp_path):
    module = tmp_path / "slow_init.py"
    module.write_text("def mod_main(h, *args):\n    while True:\n        pass\n")
    with Runner(str(module), [], budgets=BUDGETS) as runner:
        outcome = runner.run(PROBE)
    [finding] = outcome.findings
    assert finding.clause == "robust.no-hang" and finding.verdict == FAIL
    assert "mod_main of slow_init" in finding.evidence.text
    assert re.search(r"slow_init\.py:[23] in mod_main", finding.evidence.text)
    # the stack is mod_main's (its greenlet's), not the broker's
    assert "in _main" in finding.evidence.traceback


def test_sys_exit_at_import_is_a_crash_not_the_kits(tmp_path):
    module = tmp_path / "quits.py"
    module.write_text("import sys\nsys.exit(3)\n")
    with Runner(str(module), [], budgets=BUDGETS) as runner:
        outcome = runner.run(PROBE)
        assert _verdicts(outcome) == {"robust.no-crash": FAIL}
        assert "the probe ended with SystemExit: 3" in outcome.findings[0].evidence.text
        assert 'quits.py", line 2' in outcome.findings[0].evidence.traceback


@pytest.mark.parametrize(
    "probe_wall, said",
    [
        # The wall budget comes first (the silence would end it at 6 s).
        (4.0, "did not finish within its wall budget of 4 s"),
        # The missing signs of life of the worker's watchdog end it after
        # the callback budget and the grace, long before the wall budget.
        (120.0, "gave no sign of life for 6 s"),
    ],
)
def test_a_loop_that_holds_the_gil_is_stopped_with_its_stacks(probe_wall, said):
    """The watchdog thread never runs again; SIGUSR1 still dumps stacks."""
    budgets = Budgets(probe_wall=probe_wall, callback_wall=1.0, memory_mb=768)
    path = GALLERY / "hang_gil_import.py"
    with Runner(str(path), [], budgets=budgets) as runner:
        outcome = runner.run(PROBE)
    [finding] = outcome.findings
    assert finding.clause == "robust.no-hang" and finding.verdict == FAIL
    assert said in finding.evidence.text
    assert "hang_gil_import.py:13 in <module>" in finding.evidence.text
    assert "SIGKILL" in finding.evidence.text
    assert "Current thread" in finding.evidence.traceback  # faulthandler's dump


def test_the_runner_goes_on_after_a_death():
    with Runner(str(GALLERY / "os_exit_callback.py"), [], budgets=BUDGETS) as runner:
        before = runner.run(OTHER)
        died = runner.run(PROBE)
        assert runner.pid is None
        after = runner.run(OTHER)
        again = runner.run(PROBE)
    assert _verdicts(died) == {"robust.no-crash": FAIL}
    assert _verdicts(again) == {"robust.no-crash": FAIL}
    for outcome in (before, after):
        assert FAIL not in _verdicts(outcome).values()
        assert all(_verdicts(outcome)[c] == PASS for c in GENERIC_CLAUSES)
    assert before.stats["isolation"]["pid"] != after.stats["isolation"]["pid"]


def test_a_death_is_seen_though_a_forked_process_holds_the_pipes(tmp_path):
    """The forked process keeps the result pipe open: the runner notices the
    worker's exit anyway, and kills what it left in its process group."""
    module = tmp_path / "forker.py"
    module.write_text(
        textwrap.dedent(
            f"""
            import os, sys, time
            sys.path.insert(0, {str(GALLERY)!r})
            from _base import GalleryFifo

            class Forker(GalleryFifo):
                def schedule(self):
                    if os.fork() == 0:
                        time.sleep(60)
                    os._exit(5)

            def mod_main(h, *args):
                Forker(h, *args).run()
            """
        )
    )
    with Runner(str(module), [], budgets=BUDGETS) as runner:
        outcome = runner.run(PROBE)
    [finding] = outcome.findings
    assert finding.clause == "robust.no-crash" and finding.verdict == FAIL
    assert "exit code 5" in finding.evidence.text
    assert "forker.py:" in finding.evidence.text
    assert "wall budget" not in finding.evidence.text


@pytest.mark.parametrize(
    "tampering",
    [
        "os.closerange(3, 1024)",  # as daemon code does
        "null = os.open(os.devnull, os.O_RDWR)\n"
        "for fd in range(0, 64):\n"
        "    if fd != null:\n"
        "        try:\n"
        "            os.dup2(null, fd)\n"
        "        except OSError:\n"
        "            pass",
    ],
    ids=["closed", "replaced"],
)
def test_a_module_that_takes_the_kits_pipes_fails_no_crash_saying_so(
    tmp_path, tampering
):
    """Descriptors the module did not open are, in a real broker, the
    broker's own; here the worker's pipes to the kit.  Closed or replaced,
    the worker ends itself and says why (it used to say "status 0" or
    "exit code 70", its watchdog's)."""
    module = tmp_path / "takes_fds.py"
    module.write_text(
        f"import os, sys\nsys.path.insert(0, {str(GALLERY)!r})\n"
        f"{tampering}\nfrom correct_fifo import mod_main  # noqa\n"
    )
    with Runner(str(module), [], budgets=BUDGETS) as runner:
        outcome = runner.run(PROBE)
        again = runner.run(OTHER)  # a new worker, which fails the same way
    for result in (outcome, again):
        [finding] = result.findings
        assert finding.clause == "robust.no-crash" and finding.verdict == FAIL
        assert (
            "exit code 71: its pipes to the kit were closed or replaced"
            in finding.evidence.text
        )


def test_a_recycled_child_is_replaced():
    with Runner(str(GALLERY / "stray_thread.py"), [], budgets=BUDGETS) as runner:
        first = runner.run(OTHER)
        second = runner.run(OTHER)
    assert _verdicts(first) == _verdicts(second) == {"robust.no-stray-threads": FAIL}
    assert first.stats["isolation"]["pid"] != second.stats["isolation"]["pid"]


# Threads a module may leave, judged as flux-core 0.88's process per module
# judges them: its exit shuts down the thread pools, ends the daemons and
# waits for every other thread.
_POOL = """
import concurrent.futures, threading
pool = getattr(self, "pool", None)
if pool is None:
    pool = self.pool = concurrent.futures.ThreadPoolExecutor(2, "matcher")
pool.submit(len, self._queue).result()
"""


def test_a_thread_pool_the_module_left_idle_is_no_stray(tmp_path):
    # Its workers are no daemons: a stray until 2026-12-07, which failed
    # every probe and left its clauses without a verdict.
    module = _module(tmp_path, "pooled", _POOL)
    with Runner(str(module), [], budgets=BUDGETS) as runner:
        outcome = runner.run(PROBE)
    assert _verdicts(outcome)["robust.no-stray-threads"] == PASS
    assert FAIL not in _verdicts(outcome).values()


def test_a_thread_pool_busy_for_ever_is_a_stray(tmp_path):
    body = _POOL + "pool.submit(threading.Event().wait)\n"
    module = _module(tmp_path, "pool_busy", body)
    with Runner(str(module), [], budgets=BUDGETS) as runner:
        outcome = runner.run(PROBE)
    [finding] = outcome.findings
    assert finding.clause == "robust.no-stray-threads"
    assert "not daemons" in finding.evidence.text
    assert "'matcher_" in finding.evidence.text


def test_a_daemon_thread_is_no_stray_and_its_worker_is_replaced(tmp_path):
    body = """
    import threading
    if not getattr(self, "helper", None):
        self.helper = threading.Thread(
            target=threading.Event().wait, name="exporter", daemon=True
        )
        self.helper.start()
    """
    module = _module(tmp_path, "exporter", body)
    with Runner(str(module), [], budgets=BUDGETS) as runner:
        first = runner.run(PROBE)
        second = runner.run(PROBE)
    assert FAIL not in _verdicts(first).values()
    assert FAIL not in _verdicts(second).values()
    assert first.stats["isolation"]["pid"] != second.stats["isolation"]["pid"]


def test_ctrl_c_kills_the_child_and_propagates(tmp_path, monkeypatch):
    # The scheduler writes to a FIFO once it is stuck in its callback; a
    # helper thread waits for that (bounded) and only then interrupts the
    # main thread, so the interrupt always lands while run() waits.
    marker = tmp_path / "stuck"
    os.mkfifo(marker)
    monkeypatch.setenv("SCHEDKIT_TEST_MARKER", str(marker))
    budgets = Budgets(probe_wall=120.0, callback_wall=120.0)
    runner = Runner(str(INPUTS / "waits_for_interrupt.py"), [], budgets=budgets)
    main = threading.get_ident()

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    def interrupt_once_stuck():
        fd = os.open(marker, os.O_RDONLY | os.O_NONBLOCK)
        try:
            ready, _, _ = select.select([fd], [], [], 100)
        finally:
            os.close(fd)
        if ready:
            signal.pthread_kill(main, signal.SIGALRM)

    previous = signal.signal(signal.SIGALRM, interrupt)
    helper = threading.Thread(target=interrupt_once_stuck, daemon=True)
    helper.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            runner.run(PROBE)
    finally:
        signal.signal(signal.SIGALRM, previous)
        helper.join(5)
    assert runner.pid is None
    runner.close()


def test_an_unknown_probe_is_the_callers_error():
    with Runner(str(GALLERY / "correct_fifo.py"), [], budgets=BUDGETS) as runner:
        with pytest.raises(KeyError):
            runner.run("no-such-probe")
        assert runner.pid is None


def test_execute_in_process_reports_a_livelock_not_the_probes_clauses():
    findings, _ = execute(
        PROBE,
        str(GALLERY / "livelock_zero_timer.py"),
        limits={"messages_per_instant": 500},
    )
    [finding] = findings
    assert finding.clause == "robust.no-livelock" and finding.verdict == FAIL
    assert "limit 500" in finding.evidence.text
    assert finding.evidence.time == 1.0
    assert "reason_pending" in finding.evidence.excerpt


def test_a_livelock_that_is_a_protocol_fault_going_round_fails_that_clause_too(
    tmp_path,
):
    # A second SUCCESS for every freed job: the job-manager frees it again,
    # and the two go round at one instant.  The referee's violation is
    # reported under its clause (once) beside robust.no-livelock.
    module = module_file(
        tmp_path,
        "answers_again",
        """
        from _base import GalleryFifo

        class AnswersAgain(GalleryFifo):
            answered = {}

            def start(self, job, alloc):
                self.answered[job.jobid] = (job.request, alloc)
                super().start(job, alloc)

            def free(self, jobid, R, final=False):
                super().free(jobid, R, final)
                request, alloc = self.answered[jobid]
                request.success(alloc)

        def mod_main(h, *args):
            AnswersAgain(h, *args).run()
        """,
    )
    findings, _ = execute("protocol:free", module, limits={"messages_per_instant": 500})
    with Runner(module, [], budgets=BUDGETS) as runner:
        outcome = runner.run("protocol:free")  # the kit's own way: in its worker
    for found in (findings, outcome.findings):
        assert [(f.clause, f.verdict) for f in found] == [
            ("robust.no-livelock", FAIL),
            ("alloc.one-final-response", FAIL),
        ]
        assert "second-final-response" in found[1].evidence.text


# -- preflight --------------------------------------------------------------------------


def test_preflight_accepts_a_module_that_imports():
    assert preflight(str(GALLERY / "correct_fifo.py")) is None


@pytest.mark.parametrize(
    "source, expected",
    [
        (None, "No such file or directory"),
        ("def broken(:\n", "syntax error"),
        ("import no_such_module_for_schedkit\n", "No module named 'no_such_module_for"),
        ("raise RuntimeError('boom at import')\n", "RuntimeError: boom at import"),
    ],
    ids=["missing", "syntax", "import-error", "raises"],
)
def test_preflight_reports_usage_errors(tmp_path, source, expected):
    path = tmp_path / "sched.py"
    if source is not None:
        path.write_text(source)
    message = preflight(str(path))
    assert message is not None and expected in message
    assert "\n" not in message


def test_preflight_reports_a_dotted_module_that_is_not_found():
    message = preflight("no_such_package_for_schedkit.sched")
    assert message is not None and "module not found" in message


def test_preflight_reports_a_missing_class(tmp_path):
    message = preflight(str(GALLERY / "correct_fifo.py") + ":NoSuchClass")
    assert message is not None and "NoSuchClass" in message


def test_preflight_reports_arguments_the_module_refuses():
    message = preflight(str(GALLERY / "correct_fifo.py"), ["queue-depth=0"])
    assert message == (
        "--args: the module refuses them: correct_fifo: queue-depth='0' is "
        "invalid: expected a positive integer or 'unlimited'"
    )
    assert preflight(str(GALLERY / "correct_fifo.py"), ["queue-depth=4"]) is None


def test_preflight_leaves_a_module_that_cannot_load_at_all_to_the_clauses():
    # It fails without arguments too: load.reaches-reactor, with evidence.
    assert (
        preflight(str(GALLERY / "load_reaches_reactor.py"), ["queue-depth=0"]) is None
    )


@pytest.mark.parametrize("module", ["loop_at_import", "hang_gil_import"])
def test_preflight_leaves_a_hang_at_import_to_the_clauses(module):
    assert preflight(str(GALLERY / f"{module}.py"), timeout=2.0) is None


def test_preflight_leaves_a_crash_at_import_to_the_clauses(tmp_path):
    path = tmp_path / "crash.py"
    path.write_text("import os\nos._exit(4)\n")
    assert preflight(str(path)) is None


# -- a module that reaches for the kit ---------------------------------------------


def _module(tmp_path, name: str, body: str) -> Path:
    """A GalleryFifo whose schedule() runs *body* first."""
    module = tmp_path / f"{name}.py"
    module.write_text(
        textwrap.dedent(
            f"""
            import os, signal, sys, time
            sys.path.insert(0, {str(GALLERY)!r})
            from _base import GalleryFifo

            def stat(pid):
                with open(f"/proc/{{pid}}/stat", "rb") as f:
                    return f.read().rpartition(b")")[2].split()

            class Hostile(GalleryFifo):
                def schedule(self):
            """
        )
        + textwrap.indent(textwrap.dedent(body), " " * 8)
        + textwrap.dedent(
            """
                    super().schedule()

            def mod_main(h, *args):
                Hostile(h, *args).run()
            """
        )
    )
    return module


def test_an_exception_whose_text_raises_keyboard_interrupt_is_still_a_crash(
    tmp_path,
):
    module = _module(
        tmp_path,
        "odd_text",
        """
        class Odd(BaseException):
            def __str__(self):
                raise KeyboardInterrupt
        if self._queue:
            raise Odd()
        """,
    )
    with Runner(str(module), [], budgets=BUDGETS) as runner:
        outcome = runner.run(PROBE)
    # The text of Odd raised the KeyboardInterrupt, in the module's code:
    # that is what ended the probe, and the traceback shows where.
    assert _verdicts(outcome) == {"robust.no-crash": FAIL}
    evidence = outcome.findings[0].evidence
    assert "KeyboardInterrupt (raised by the scheduler" in evidence.text
    assert "in __str__" in evidence.traceback


@pytest.mark.parametrize("sig", ["SIGKILL", "SIGINT", "SIGTERM"])
def test_a_module_that_signals_its_parent_fails_no_crash_and_the_kit_lives(
    tmp_path, sig
):
    """The module's parent is the kit's keeper, not the kit: killing it (or
    sending it any signal) ends the probe as robust.no-crash, with evidence,
    and the runner goes on."""
    body = f"os.kill(os.getppid(), signal.{sig})\ntime.sleep(60)\n"
    module = _module(tmp_path, "parricide", body)
    with Runner(str(module), [], budgets=BUDGETS) as runner:
        outcome = runner.run(OTHER)
        after = runner.run(OTHER)  # a new worker; the same fate
    [finding] = outcome.findings
    assert finding.clause == "robust.no-crash" and finding.verdict == FAIL
    assert "parent process (the kit's keeper" in finding.evidence.text
    assert sig in finding.evidence.text
    assert "wall budget" not in finding.evidence.text
    assert _verdicts(after) == {"robust.no-crash": FAIL}


def test_a_module_that_stops_its_parent_fails_no_crash(tmp_path):
    body = """
    os.kill(os.getppid(), signal.SIGSTOP)
    while stat(os.getppid())[0] != b"T":  # stopped: the kit sees it
        time.sleep(0.01)
    """
    module = _module(tmp_path, "stopper", body)
    with Runner(str(module), [], budgets=BUDGETS) as runner:
        outcome = runner.run(OTHER)
        assert runner.pid is None  # killed with its keeper
    [finding] = outcome.findings
    assert finding.clause == "robust.no-crash" and finding.verdict == FAIL
    assert "was stopped" in finding.evidence.text


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rpartition(b")")[2].split()[0] != b"Z"
    except OSError:
        return False


@pytest.mark.parametrize("escape", ["os.setsid()", "os.setpgid(0, 0)"])
def test_no_process_the_module_started_survives_the_probe(tmp_path, escape):
    """A daemon in a session or group of its own is killed after the probe
    and named in robust.no-stray-threads; the worker stays sound."""
    pids = tmp_path / "pids"
    body = f"""
    if not os.path.exists({str(pids)!r}):
        r, w = os.pipe()
        if os.fork() == 0:
            {escape}
            if os.fork() == 0:
                os.write(w, b"%d\\n" % os.getpid())
                os.execvp("sleep", ["sleep", "1002"])
            os._exit(0)
        os.close(w)
        data = b""
        while chunk := os.read(r, 100):  # EOF once exec closed it (CLOEXEC)
            data += chunk
        with open({str(pids)!r}, "wb") as f:
            f.write(data)
    """
    module = _module(tmp_path, "daemonizer", body)
    with Runner(str(module), [], budgets=BUDGETS) as runner:
        outcome = runner.run(OTHER)
        pid = int(pids.read_text())
        assert not _alive(pid), "the module's daemon outlived the probe"
        again = runner.run(OTHER)  # started nothing this time
    [finding] = outcome.findings
    assert finding.clause == "robust.no-stray-threads" and finding.verdict == FAIL
    assert f"{pid} (sleep 1002)" in finding.evidence.text
    assert FAIL not in _verdicts(again).values()


# -- what the module says, and what it can fake ----------------------------------------


def test_a_huge_exception_message_is_clipped_before_it_is_sent(tmp_path):
    """20 MB of message is a crash with a clipped text, not a hang of the
    pipe between the worker and the kit."""
    body = 'raise RuntimeError("M" * 20_000_000)\n'
    module = _module(tmp_path, "shouts", body)
    with Runner(str(module), [], budgets=BUDGETS) as runner:
        outcome = runner.run(OTHER)
    verdicts = _verdicts(outcome)
    assert verdicts["robust.no-crash"] == FAIL and verdicts["robust.no-hang"] == PASS
    [evidence] = [f.evidence for f in outcome.findings if f.clause == "robust.no-crash"]
    assert "characters cut]" in evidence.text
    for text in (evidence.text, evidence.traceback, evidence.excerpt):
        assert len(text) < 20_000


def test_clipping_keeps_the_start_and_says_what_went():
    from conformance.worker import MAX_ITEM, MAX_TEXT, bounded, clip_item

    assert clip_item("short") == "short"
    assert (
        clip_item("x" * (MAX_ITEM + 10)) == "x" * MAX_ITEM + "[... 10 characters cut]"
    )
    long_line = "y" * 100_000
    data = bounded({"findings": [{"evidence": {"traceback": f"a\n{long_line}\nb"}}]})
    traceback = data["findings"][0]["evidence"]["traceback"]
    assert traceback.startswith("a\n" + "y" * MAX_ITEM + "[... ")
    assert traceback.endswith("\nb") and len(traceback) <= MAX_TEXT + 100


def test_an_overlong_result_line_is_garbled_not_read_forever():
    from conformance.runner import MAX_LINE, _ChildGone, _Lines

    r, w = os.pipe()
    payload = b"x" * (MAX_LINE + (1 << 16))

    def feed():
        try:
            view = memoryview(payload)
            while view:
                view = view[os.write(w, view) :]
        except OSError:  # the reader gave up and closed its end
            pass
        finally:
            os.close(w)

    feeder = threading.Thread(target=feed)
    feeder.start()
    # A live child stands for the keeper: the reader checks that it is.
    proc = subprocess.Popen([sys.executable, "-c", "input()"], stdin=subprocess.PIPE)
    try:
        with pytest.raises(_ChildGone) as gone:
            _Lines(r, proc).read(float("inf"))
    finally:
        os.close(r)
        feeder.join()
        proc.communicate(b"\n")
    assert gone.value.garbled == b"x" * 200


def _beating(w: int, stop: threading.Event) -> threading.Thread:
    """A worker left without its keeper: a beat every 50 ms until *stop*."""

    def beat():
        while not stop.wait(0.05):
            os.write(w, b'{"type": "beat", "id": 1}\n')
        os.close(w)

    thread = threading.Thread(target=beat)
    thread.start()
    return thread


def test_a_killed_keeper_is_seen_while_its_orphaned_worker_still_beats():
    """The keeper SIGKILLed (no exit report) and the worker beating on: the
    reader must say the child is gone, not hand out beats until the probe's
    deadline (the worker then reported its own callback overrun instead of
    the attack on its parent)."""
    from conformance.runner import _TIMEOUT, _ChildGone, _Lines

    r, w = os.pipe()
    stop = threading.Event()
    beater = _beating(w, stop)
    killed = type("Killed", (), {"returncode": -9, "pid": os.getpid()})()
    lines = _Lines(r, killed)
    beats, deadline = 0, time.perf_counter() + 5.0  # a probe's wall budget
    try:
        with pytest.raises(_ChildGone) as gone:
            while lines.read(deadline) is not _TIMEOUT:
                beats += 1
    finally:
        stop.set()
        beater.join()
        os.close(r)
    assert gone.value.report is None and gone.value.garbled is None
    assert beats <= 1  # at most the one already in the pipe


def test_a_keeper_that_ended_by_itself_is_read_to_its_report():
    """A keeper exits after writing its report: seen exited, the report
    still pending in the pipe is what the reader gives."""
    from conformance.runner import _ChildGone, _Lines

    r, w = os.pipe()
    os.write(w, b'{"type": "result", "id": 1}\n')
    os.write(w, b'{"type": "exit", "status": 0, "cause": null}\n')
    exited = type("Exited", (), {"returncode": 0, "pid": os.getpid()})()
    lines = _Lines(r, exited)
    try:
        assert lines.read(time.perf_counter() + 5.0) == {"type": "result", "id": 1}
        with pytest.raises(_ChildGone) as gone:
            lines.read(time.perf_counter() + 5.0)
    finally:
        os.close(w)
        os.close(r)
    assert gone.value.report == {"type": "exit", "status": 0, "cause": None}


@pytest.mark.parametrize(
    "body",
    [
        'print("warning: no cache (avoids a MemoryError)", file=sys.stderr)\n'
        "import ctypes; ctypes.string_at(0)\n",
        'sys.stderr.write("Traceback (most recent call last):\\n'
        '  File \\"/etc/passwd\\", line 1\\nMemoryError: no\\n")\nos._exit(1)\n',
    ],
    ids=["segfault-after-a-warning", "fake-traceback"],
)
def test_text_that_mentions_memoryerror_is_not_a_memory_verdict(tmp_path, body):
    module = _module(tmp_path, "mentions", body)
    with Runner(str(module), [], budgets=BUDGETS) as runner:
        outcome = runner.run(OTHER)
    assert _verdicts(outcome) == {"robust.no-crash": FAIL}


def test_a_memory_error_at_import_fails_robust_memory(tmp_path):
    module = tmp_path / "hog_at_import.py"
    module.write_text("x = bytearray(10 * 2**30)\n")
    with Runner(str(module), [], budgets=BUDGETS) as runner:
        outcome = runner.run(OTHER)
    [finding] = outcome.findings
    assert finding.clause == "robust.memory" and finding.verdict == FAIL
    assert "MemoryError" in finding.evidence.traceback
    assert "hog_at_import.py" in finding.evidence.traceback


def test_a_garbled_result_is_described_as_one(tmp_path):
    body = """
    fd = int(sys.argv[sys.argv.index("--results-fd") + 1])
    os.write(fd, b"garbage\\n")
    time.sleep(60)
    """
    module = _module(tmp_path, "garbler", body)
    with Runner(str(module), [], budgets=BUDGETS) as runner:
        outcome = runner.run(OTHER)
    [finding] = outcome.findings
    assert finding.clause == "robust.no-crash" and finding.verdict == FAIL
    assert "garbled result line" in finding.evidence.text
    assert "b'garbage'" in finding.evidence.text
    assert "status 0" not in finding.evidence.text


def _patching_module(tmp_path, name: str, patch: str) -> Path:
    """The gallery's correct FIFO, with *patch* (lines) run at its import."""
    module = tmp_path / f"{name}.py"
    module.write_text(
        f"import builtins, json, os, sys\nsys.path.insert(0, {str(GALLERY)!r})\n"
        "from _base import GalleryFifo\n"
        f"{patch}\n\n"
        "def mod_main(h, *args):\n    GalleryFifo(h, *args).run()\n"
    )
    return module


def test_a_module_that_patches_json_dumps_does_not_garble_the_results(tmp_path):
    module = _patching_module(
        tmp_path, "patcher", 'json.dumps = lambda *a, **k: "garbage"'
    )
    with Runner(str(module), [], budgets=BUDGETS) as runner:
        outcome = runner.run(OTHER)
    # The worker answered; what the patch broke is the module's own JSON.
    assert outcome.stats["isolation"]["pid"]
    texts = [f.evidence.text for f in outcome.findings if f.evidence]
    assert not any("garbled" in t or "status 0" in t for t in texts), texts


@pytest.mark.parametrize(
    "patch",
    [
        # The worker read the kit's next request (bytes) with the module's
        # json.loads: an empty request ended it ("status 0 before
        # answering").
        "real = json.loads\n"
        "json.loads = lambda s, *a, **k: {} if isinstance(s, bytes) else real(s)",
        # The mock broker started mod_main on a threading.Thread: it never
        # ran, and the module failed robust.no-hang at the kit's own line.
        "import threading\nthreading.Thread.start = lambda self: None",
        # An import that registers something process-wide once (a metrics
        # registry): every load after the first in the worker failed,
        # where flux-core 0.88 imports a module in a new process each time.
        "if getattr(sys, '_registered', False):\n"
        "    raise ValueError('Duplicated timeseries in CollectorRegistry')\n"
        "sys._registered = True",
        # After each probe the worker reads /proc for processes the module
        # left; with these replaced at import, that read raised in the
        # worker, which died and got the module a crash.
        "builtins.open = None\nos.listdir = None",
    ],
    ids=["json.loads", "Thread.start", "registry", "open-listdir"],
)
def test_a_module_that_patches_what_the_kit_runs_on_is_judged_as_it_is(tmp_path, patch):
    module = _patching_module(tmp_path, "patcher", patch)
    with Runner(str(module), [], budgets=BUDGETS) as runner:
        first = runner.run(PROBE)
        second = runner.run(OTHER)  # read after the module's import
    for outcome in (first, second):
        verdicts = _verdicts(outcome)
        assert all(verdicts[c] == PASS for c in GENERIC_CLAUSES), outcome.findings


def test_a_resource_limit_the_module_changed_is_in_the_evidence_of_its_death(
    tmp_path,
):
    # Under flux-core 0.88 the limits are the module's own process's:
    # lowering RLIMIT_CPU, say, gets it killed.  The kit could only say
    # "SIGKILL"; the worker logs the change, and the death's evidence
    # quotes the log.
    module = _module(
        tmp_path,
        "limiter",
        """
        import resource
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (200, hard))
        os._exit(3)
        """,
    )
    with Runner(str(module), [], budgets=BUDGETS) as runner:
        outcome = runner.run(PROBE)
    [finding] = outcome.findings
    assert finding.clause == "robust.no-crash" and finding.verdict == FAIL
    assert "exit code 3" in finding.evidence.text
    assert (
        "the module changed RLIMIT_NOFILE (soft, hard) from ("
        in finding.evidence.traceback
    )
    assert ") to (200, " in finding.evidence.traceback


def test_a_module_that_removes_its_current_folder_leaves_the_kit_importing(
    tmp_path,
):
    # hypothesis reads the current folder when imported; the random
    # sequences probe, after another probe had loaded the module, imported
    # it in a folder the module had removed, and failed with the kit's
    # FileNotFoundError.
    module = _patching_module(
        tmp_path,
        "homeless",
        "import tempfile\nhere = tempfile.mkdtemp()\nos.chdir(here)\nos.rmdir(here)",
    )
    with Runner(str(module), [], budgets=BUDGETS, examples=2) as runner:
        first = runner.run(PROBE)
        outcome = runner.run("robust.random-sequences")
    assert FAIL not in _verdicts(first).values(), first.findings
    assert _verdicts(outcome)["robust.random-sequences"] == PASS, outcome.findings


_ENDLESS_PASS = """
    def endless():
        while True:
            yield
    return endless()
    """


def test_a_pass_that_never_ends_but_yields_fails_no_livelock_at_its_line(tmp_path):
    # The broker never leaves the instant such a pass keeps busy: every
    # probe ran to its wall budget (robust.no-hang, 6 minutes for the kit
    # on a module that waits in its pass for room).  The reactor
    # iterations of one module at one instant are a budget now.
    module = _module(tmp_path, "endless_pass", _ENDLESS_PASS)
    with Runner(str(module), [], budgets=BUDGETS) as runner:
        outcome = runner.run("scale.completes")
    [finding] = [f for f in outcome.findings if f.verdict == FAIL]
    assert finding.clause == "robust.no-livelock"
    text = finding.evidence.text
    assert f"{BUDGETS.iterations_per_instant} reactor iterations of" in text
    assert f"a pass suspended at {module}:" in text
    assert "in endless" in text


def test_a_pass_that_never_ends_but_yields_fails_the_scale_clause_early(tmp_path):
    # Where the iterations at one instant are not bounded (a budget set
    # high), the scale probe's checks between steps stop it: the pace (no
    # job arriving), not the wall budget.
    module = _module(tmp_path, "endless_pass", _ENDLESS_PASS)
    budgets = dataclasses.replace(BUDGETS, iterations_per_instant=10**12)
    with Runner(str(module), [], budgets=budgets) as runner:
        outcome = runner.run("scale.completes")
    [finding] = [f for f in outcome.findings if f.verdict == FAIL]
    assert finding.clause == "scale.completes"
    assert "no job arrived in the last" in finding.evidence.text


def test_a_scheduler_that_stops_its_reactor_by_itself_fails_no_crash(tmp_path):
    # mod_main returns cleanly once the reactor stops: no error, but the
    # instance is left without a scheduler, as after sys.exit(0) (which
    # already failed the clause).
    module = _module(tmp_path, "quitter", "self.handle.reactor_stop()\nreturn\n")
    with Runner(str(module), [], budgets=BUDGETS) as runner:
        outcome = runner.run(PROBE)
    failures = [f for f in outcome.findings if f.clause == "robust.no-crash"]
    assert failures and all(f.verdict == FAIL for f in failures), outcome.findings
    assert "exited: ok (on its own: not removed)" in failures[0].evidence.text


def test_where_skips_pseudo_files_for_the_callers_frame(monkeypatch):
    """A frame in "<frozen runpy>" is not a file in the current folder."""
    import sys

    from conformance import worker

    monkeypatch.setattr(worker.STATE, "request", {"target": "/nowhere/mod.py"})
    namespace = {"sys": sys}
    exec(
        compile("def inner():\n    return sys._getframe()\n", "<frozen runpy>", "exec"),
        namespace,
    )  # noqa: S102
    where = worker._where(namespace["inner"]())
    assert "<frozen runpy>" not in where
    assert where.startswith(__file__) and "test_where_skips_pseudo_files" in where


def test_random_sequences_write_nothing_in_the_current_folder(tmp_path, monkeypatch):
    """hypothesis keeps its files (the constants cache) in the runner's own
    folder, removed with it, not in ./.hypothesis."""
    monkeypatch.chdir(tmp_path)
    path = str(GALLERY / "correct_fifo.py")
    with Runner(path, [], examples=2, budgets=BUDGETS) as runner:
        outcome = runner.run("robust.random-sequences")
    assert FAIL not in _verdicts(outcome).values(), outcome.findings
    assert list(tmp_path.iterdir()) == []


def test_where_reads_the_kit_folders_when_a_package_has_no_file(monkeypatch):
    """A namespace package, or a module the code under test put in the
    place of one, has no ``__file__``: locating a frame still works."""
    import sys
    import types

    from conformance import worker

    monkeypatch.setattr(worker.STATE, "request", {"target": "/nowhere/mod.py"})
    worker._kit_dirs.cache_clear()
    monkeypatch.setitem(sys.modules, "flux", types.ModuleType("flux"))
    try:
        where = worker._where(sys._getframe())
    finally:
        worker._kit_dirs.cache_clear()
    assert where.startswith(__file__)


_DIES_UNCLEAN = """
import os, sys
from conformance.runner import Runner

runner = Runner(sys.argv[1], [])
runner._start()
print(runner._proc.pid, runner._dir, flush=True)
os._exit(0)  # as after a SIGKILL: no close(), no cleanup
"""


def test_the_keeper_removes_the_folder_of_a_kit_that_died(tmp_path):
    """A kit process killed outright (a module that killed pytest's xdist
    worker, say) cannot remove its worker folder: the keeper does."""
    import subprocess
    import sys
    import time

    script = tmp_path / "dies.py"
    script.write_text(_DIES_UNCLEAN)
    out = subprocess.run(
        [sys.executable, str(script), str(GALLERY / "correct_fifo.py")],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2])),
    )
    keeper, folder = out.stdout.split()
    assert os.path.basename(folder).startswith("schedkit-worker-"), out.stderr
    from conformance.keeper import process_table

    def running() -> bool:  # a zombie waits for its new parent: it has ended
        return process_table().get(int(keeper), (0, "Z"))[1] != "Z"

    # The keeper ends once the worker and the folder are gone.
    deadline = time.monotonic() + 60
    while running() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not running()
    assert not Path(folder).exists()


def test_a_module_that_floods_its_output_hits_the_log_cap(tmp_path):
    """Printing without end fills the log up to the cap, then the write
    fails in the module (File too large): a crash at the module's line,
    not a full disk."""
    body = 'for _ in range(4):\n    sys.stdout.write("z" * 2**20)\nsys.stdout.flush()\n'
    module = _module(tmp_path, "floods", body)
    budgets = Budgets(**{**BUDGETS.__dict__, "log_mb": 1})
    with Runner(str(module), [], budgets=budgets) as runner:
        outcome = runner.run(OTHER)
        size = os.path.getsize(runner._log)
    assert size <= 2**20
    verdicts = _verdicts(outcome)
    assert verdicts["robust.no-crash"] == FAIL
    [evidence] = [f.evidence for f in outcome.findings if f.clause == "robust.no-crash"]
    assert "File too large" in evidence.text and "floods.py" in evidence.text
