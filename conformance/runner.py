"""The kit's isolation runner: every probe runs in a child process.

The scheduler under test may be wrong in any way: loop, sleep, exit, crash,
leak threads or memory, flood the broker.  :class:`Runner` keeps one child
(:mod:`conformance.worker`) per scheduler, sends it one probe at a time and
turns whatever becomes of it into findings, so the kit itself never hangs
or crashes.  A child that died, hung or asked to be recycled is replaced
before the next probe.

.. rubric:: Generic clauses

Every probe's outcome carries a verdict on each of
:data:`~conformance.clauses.GENERIC_CLAUSES`: ``callbacks.prompt``,
``robust.no-hang``, ``robust.no-crash``, ``robust.memory``,
``robust.no-livelock`` and ``robust.no-stray-threads`` pass when the probe
ran within every budget, and are not applicable ("not exercised") on a
probe where the module's ``mod_main`` never ran: a module that never
loaded has kept no budget worth certifying.  When a budget trips or the
child dies, that one clause fails, with evidence (the stuck stack, or the
tail of the child's log, and the exit status or signal), and the probe's
other clauses get no verdict at all: what the probe saw was a consequence.

.. rubric:: Budgets (:class:`Budgets`)

``probe_wall``
    Real seconds a probe may take (default: the probe's own
    :attr:`~conformance.probes.Probe.budget`).  On overrun the child gets
    SIGUSR1 (:mod:`faulthandler` writes every thread's stack to its log),
    then SIGKILL; ``robust.no-hang`` fails with the stacks.
``callback_wall``
    Real seconds one reactor callback, module load or ``mod_main`` phase
    may take; enforced by the child's watchdog (``callbacks.prompt`` or
    ``robust.no-hang``).  That watchdog is a thread: a scheduler holding
    the interpreter lock in C code, or a stopped child, stops it, and its
    signs of life with it; after ``callback_wall`` and
    :data:`SILENCE_GRACE` seconds without one the probe ends as over its
    wall budget does (``robust.no-hang``, the stacks, SIGKILL).
``messages_per_instant``
    Messages from modules at one virtual instant (``robust.no-livelock``).
``iterations_per_instant``
    Reactor iterations of one module at one virtual instant
    (``robust.no-livelock``): a pass that yields without end while
    nothing else happens, or a timer due again at once that sends
    nothing, keeps the clock from moving without a message.  The
    reference schedulers and flux-core's take at most about a hundred.
``memory_mb``
    The child's address-space limit, ``RLIMIT_AS`` (``robust.memory``).
``log_mb``
    The most the child may write to its log (stdout and stderr), the
    file-size limit ``RLIMIT_FSIZE``: a write past it fails with ``EFBIG``
    ("File too large") in the module, ``robust.no-crash`` with the module's
    line, so a module printing without end cannot fill the disk.

.. rubric:: Processes

The runner starts a keeper (:mod:`conformance.keeper`), which starts the
worker (:mod:`conformance.worker`): the module's ``os.getppid()`` is the
keeper, whose death, stop or signals the runner reports as the probe's
``robust.no-crash``.  The child's protocol is described in
:mod:`conformance.worker`.
"""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from conformance.clauses import GENERIC_CLAUSES
from conformance.findings import PASS, Finding, failed, not_applicable, passed
from conformance.keeper import descendants, kill_all, process_of
from conformance.worker import EXIT_PIPES_LOST

#: Real seconds a new child may take to import the kit and say it is ready.
STARTUP_TIMEOUT = 60.0
#: After SIGUSR1, how long the child gets to write its stacks (s).
STACK_DUMP_WAIT = 1.0
#: How long a child that should be exiting gets before SIGKILL (s).
EXIT_GRACE = 2.0
#: Seconds past the callback budget a worker in a probe may go without a
#: sign of life (its watchdog's beats, :data:`conformance.worker.BEAT`)
#: before it counts as stuck where its own watchdog cannot see.
SILENCE_GRACE = 5.0
#: Characters of the child's log quoted as evidence.
LOG_TAIL = 8000
#: Longest result line read from the worker (bytes); longer is garbled.
MAX_LINE = 64 << 20

_TIMEOUT = object()
_SILENT = object()
_FRAME = re.compile(r'File "([^"]+)", line (\d+),? in (\S+)')


@dataclass
class Budgets:
    """The limits a probe runs under (see the module docstring)."""

    probe_wall: float | None = None  # None: each Probe's own .budget (seconds)
    callback_wall: float = 5.0
    messages_per_instant: int = 100_000
    iterations_per_instant: int = 100_000
    memory_mb: int = 4096  # the kit itself needs some 100-200 MiB of it
    log_mb: int = 64


@dataclass
class ProbeOutcome:
    """One probe's findings (generic clauses included), its real duration
    in seconds, and its statistics (the probe's own, plus ``isolation``:
    the child's pid, its callback count and slowest callback)."""

    probe: str
    findings: list[Finding]
    wall: float
    stats: dict = field(default_factory=dict)


def _unexercised(finding: Finding, probe: str) -> Finding:
    """*finding*, or not applicable if it passes a generic clause: the
    module's ``mod_main`` never ran in *probe*, so it kept its budgets by
    doing nothing (a failure, at import say, stands)."""
    if finding.clause not in GENERIC_CLAUSES or finding.verdict != PASS:
        return finding
    text = "not exercised: no probe ran the module's mod_main"
    return not_applicable(finding.clause, probe, text)


class _ChildGone(Exception):
    """The child closed its end (it died, or is dying).  ``report`` is the
    keeper's exit report (:mod:`conformance.keeper`) if it came first;
    ``garbled`` the start of a result line that was not a JSON object."""

    def __init__(self, why: str, report: dict | None = None, garbled=None):
        super().__init__(why)
        self.report, self.garbled = report, garbled


#: Names the runner's folder to the keeper (:mod:`conformance.keeper`).
SCRATCH_ENV = "SCHEDKIT_SCRATCH"


def _child_env(scratch: str | None = None) -> dict:
    """The parent's environment; unbuffered output (so the log tail is
    complete at a death), few malloc arenas (address space is budgeted),
    the kit importable even from a source tree, and hypothesis's files
    (its constants cache) in *scratch*, never in the user's folder."""
    root = str(Path(__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONUNBUFFERED="1", MALLOC_ARENA_MAX="2")
    env.pop("PYTHONFAULTHANDLER", None)
    path = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(path + [root])
    if scratch is not None:
        env["HYPOTHESIS_STORAGE_DIRECTORY"] = os.path.join(scratch, "hypothesis")
        env[SCRATCH_ENV] = scratch  # the keeper removes it if the kit dies
    return env


def _spawn(args: list[str], pass_fds, log, scratch=None) -> subprocess.Popen:
    """Start the keeper (:mod:`conformance.keeper`), which starts the worker
    with *args*: the module's parent process is the keeper, not the kit."""
    return subprocess.Popen(
        [sys.executable, "-m", "conformance.keeper", *args],
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
        pass_fds=pass_fds,
        start_new_session=True,  # its own group: no terminal Ctrl-C, killpg
        env=_child_env(scratch),
    )


def _exited(proc: subprocess.Popen) -> bool:
    """True once *proc* has exited; it is not reaped, so its process group
    (whatever it forked) can still be killed safely."""
    if proc.returncode is not None:
        return True
    try:
        flags = os.WEXITED | os.WNOHANG | os.WNOWAIT
        return os.waitid(os.P_PID, proc.pid, flags) is not None
    except ChildProcessError:
        return True


def _end(
    proc: subprocess.Popen | None, grace: float = 0.0, worker: int | None = None
) -> int | None:
    """Give *proc* (a keeper) *grace* seconds to exit, SIGKILL its process
    group and the *worker*'s (they, and anything they left running), reap
    it and return its status."""
    if proc is None:
        return None
    deadline = time.perf_counter() + grace
    while not _exited(proc) and time.perf_counter() < deadline:
        time.sleep(0.02)
    if proc.returncode is None:
        # The worker and what the module started (the keeper's descendants,
        # in whatever group or session), then the groups, then the keeper.
        doomed = set(descendants(proc.pid))
        if worker:
            doomed.add(worker)
        kill_all(doomed)
        for group in (worker, proc.pid):
            try:
                if group and os.getpgid(group) == group:
                    os.killpg(group, signal.SIGKILL)
            except OSError:
                pass
    try:
        return proc.wait(timeout=30)
    except subprocess.TimeoutExpired:  # unkillable (D state): left to init
        return None


def _stopped(pid: int) -> bool:
    """True if *pid* is stopped (a stop signal; not a debugger's trace)."""
    found = process_of(pid)
    return found is not None and found[1] == "T"


def _status(code: int | None) -> str:
    if code is None:
        return "it closed its result pipe and was killed"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"it was killed by {name} (signal {-code})"
    if code == 0:
        return "it exited with status 0 before answering (sys.exit or os._exit(0))"
    if code == EXIT_PIPES_LOST:
        return (
            f"it exited with exit code {code}: its pipes to the kit were closed "
            "or replaced under it (os.close, os.closerange or os.dup2 on "
            "descriptors the module did not open: under flux-core 0.88, which "
            "runs a Python module in a process of its own, its connection to "
            "the broker)"
        )
    return f"it exited with exit code {code}"


def _located(tail: str, target: str) -> str:
    """`` at FILE:LINE in FUNC``: the scheduler file's innermost frame in a
    log tail (a faulthandler dump or a traceback), or ``""``."""
    path = target.partition(":")[0]
    if not path.endswith(".py"):
        return ""
    dump = "Current thread" in tail  # faulthandler: most recent call first
    section = tail.rpartition("Current thread")[2] if dump else tail
    wanted = os.path.realpath(path)
    hits = [m for m in _FRAME.finditer(section) if os.path.realpath(m[1]) == wanted]
    if not hits:
        return ""
    m = hits[0] if dump else hits[-1]
    return f" at {m[1]}:{m[2]} in {m[3]}"


class _Lines:
    """JSON lines read from a child's pipe, with deadlines.  A child that
    exited counts as gone even if a process it forked holds the pipe.
    Reading is linear in the bytes read, and a line longer than
    :data:`MAX_LINE` is garbled."""

    def __init__(self, fd: int, proc: subprocess.Popen):
        self.fd, self.buf, self.proc = fd, bytearray(), proc
        self.scanned = 0  # bytes of buf known to hold no newline
        self.poll = select.poll()
        self.poll.register(fd, select.POLLIN)

    def read(self, deadline: float):
        """The next object, :data:`_TIMEOUT`, or raise :class:`_ChildGone`
        (with the keeper's exit report, or the garbled line)."""
        while True:
            nl = self.buf.find(b"\n", self.scanned)
            if nl >= 0:
                line = bytes(self.buf[:nl])
                del self.buf[: nl + 1]
                self.scanned = 0
                try:
                    msg = json.loads(line)
                except ValueError:
                    msg = None
                if not isinstance(msg, dict):
                    raise _ChildGone("garbled", garbled=line[:200])
                if msg.get("type") == "exit":
                    raise _ChildGone("exited", report=msg)
                return msg
            self.scanned = len(self.buf)
            if len(self.buf) > MAX_LINE:
                raise _ChildGone("garbled", garbled=bytes(self.buf[:200]))
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                return _TIMEOUT
            # Checked before every wait, not only after a quiet one: a keeper
            # the module killed sends no report, and the worker it leaves
            # behind beats often enough that the pipe is never quiet for long.
            # A keeper that ended by itself wrote its report first (poll(0)).
            if _exited(self.proc) and not self.poll.poll(0):
                raise _ChildGone("exited")
            if not self.poll.poll(min(remaining, 0.5) * 1000):
                continue
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                raise _ChildGone("end of file")
            self.buf += chunk


class Runner:
    """Runs probes on one scheduler, each in an isolated child process.

    A context manager; one child is reused across probes and restarted
    after a death, a hang or a recycle.  ``KeyboardInterrupt`` (or any
    other exception) inside :meth:`run` kills the child and propagates; a
    ``KeyboardInterrupt`` a scheduler callback raised in the child is the
    module's (the child ignores SIGINT) and fails ``robust.no-crash``.

    Args:
        target: the scheduler, as ``flux module load`` takes it.
        args: module arguments.
        policy, seed, examples: passed to every probe.
        budgets: the limits (default :class:`Budgets`).
    """

    def __init__(
        self,
        target: str,
        args: list[str],
        *,
        policy="any",
        seed=0,
        examples=20,
        budgets: Budgets | None = None,
    ):
        self.target, self.args = target, list(args)
        self.policy, self.seed, self.examples = policy, seed, examples
        self.budgets = budgets or Budgets()
        self._proc: subprocess.Popen | None = None  # the keeper
        self._worker: int | None = None  # its child, which runs the module
        self._memory = False  # the worker reported a MemoryError this probe
        self._requests: int | None = None
        self._results: _Lines | None = None
        self._seq = 0
        self._dir = tempfile.mkdtemp(prefix="schedkit-worker-")
        self._log = os.path.join(self._dir, "worker.log")

    # -- public ----------------------------------------------------------------

    @property
    def pid(self) -> int | None:
        """The current worker's process id (None between workers)."""
        return self._worker if self._proc is not None else None

    def run(self, probe_name: str) -> ProbeOutcome:
        """Run one probe in the child and judge the generic clauses."""
        from conformance.probes import all_probes
        from mock_broker import flux_substitute

        flux_substitute.install()  # probe modules may import flux.*
        p = all_probes()[probe_name]
        wall = self.budgets.probe_wall or p.budget
        try:
            return self._run(probe_name, wall)
        except BaseException:
            self._drop(kill=True)
            raise

    def close(self) -> None:
        """Stop the child (reaped, never left a zombie) and remove its log."""
        self._drop(kill=False)
        shutil.rmtree(self._dir, ignore_errors=True)

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        try:
            self._drop(kill=True)
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

    # -- the child ---------------------------------------------------------------

    def _start(self) -> None:
        req_r, req_w = os.pipe()
        res_r, res_w = os.pipe()
        args = ["--requests-fd", str(req_r), "--results-fd", str(res_w)]
        args += ["--memory-mb", str(self.budgets.memory_mb)]
        args += ["--log-mb", str(self.budgets.log_mb)]
        try:
            with open(self._log, "wb") as log:
                self._proc = _spawn(args, (req_r, res_w), log, self._dir)
        except BaseException:
            os.close(req_w)
            os.close(res_r)
            raise
        finally:
            os.close(req_r)
            os.close(res_w)
        self._requests, self._results = req_w, _Lines(res_r, self._proc)
        report = None
        try:
            msg = self._results.read(time.perf_counter() + STARTUP_TIMEOUT)
        except _ChildGone as gone:
            msg, report = None, gone.report
        if not isinstance(msg, dict) or msg.get("type") != "ready":
            code = self._drop(kill=True)
            if report is not None:
                code = report.get("status")
            raise RuntimeError(
                f"the kit's worker process did not start ({_status(code)}):\n"
                + self._tail(0)
            )
        self._worker = msg.get("pid")

    def _drop(self, kill: bool) -> int | None:
        """Forget the child: ask the worker to exit (EOF) or kill it, and
        return its status as the keeper reports it (None if the keeper
        died or hung and was killed); the keeper is always reaped."""
        report, _ = self._finish(kill)
        return report.get("status") if report else None

    def _finish(self, kill: bool) -> tuple[dict | None, int | None]:
        """:meth:`_drop`, returning the keeper's exit report (None if it sent
        none: it was killed, or it hung) and the keeper's own status."""
        proc, self._proc = self._proc, None
        worker, self._worker = self._worker, None
        results, self._results = self._results, None
        if self._requests is not None:
            os.close(self._requests)  # EOF: a sound worker exits
            self._requests = None
        if proc is None:
            if results is not None:
                os.close(results.fd)
            return None, None
        report, code = None, None
        try:
            if kill and worker and not _exited(proc):
                try:
                    os.kill(worker, signal.SIGKILL)  # the keeper reports it
                except OSError:
                    pass
            end = time.perf_counter() + EXIT_GRACE
            while results is not None and report is None:
                try:
                    if results.read(end) is _TIMEOUT:
                        break
                except _ChildGone as gone:
                    report = gone.report
                    break
        finally:
            if results is not None:
                os.close(results.fd)
            code = _end(proc, EXIT_GRACE if report else 0.0, worker)
        return report, code

    def _log_size(self) -> int:
        try:
            return os.path.getsize(self._log)
        except OSError:
            return 0

    def _tail(self, offset: int) -> str:
        try:
            with open(self._log, "rb") as f:
                f.seek(max(offset, self._log_size() - LOG_TAIL))
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    # -- one probe ----------------------------------------------------------------

    def _run(self, name: str, wall: float) -> ProbeOutcome:
        if self._proc is None or _exited(self._proc):
            self._drop(kill=True)
            self._start()
        self._seq += 1
        offset = self._log_size()
        request = {
            "id": self._seq,
            "op": "probe",
            "probe": name,
            "target": self.target,
            "args": self.args,
            "policy": self.policy,
            "seed": self.seed,
            "examples": self.examples,
            "limits": {
                "messages_per_instant": self.budgets.messages_per_instant,
                "iterations_per_instant": self.budgets.iterations_per_instant,
            },
            "callback_wall": self.budgets.callback_wall,
            "memory_mb": self.budgets.memory_mb,
        }
        t0 = time.perf_counter()
        self._memory = False
        try:
            data = (json.dumps(request) + "\n").encode()
            view = memoryview(data)
            while view:
                view = view[os.write(self._requests, view) :]
            msg = self._receive(t0 + wall)
        except (_ChildGone, OSError) as exc:
            gone = exc if isinstance(exc, _ChildGone) else _ChildGone(str(exc))
            findings = [self._died(name, offset, gone)]
            return ProbeOutcome(name, findings, time.perf_counter() - t0, {})
        if msg is _TIMEOUT or msg is _SILENT:
            silent = self._silence() if msg is _SILENT else 0
            findings = [self._hung(name, wall, offset, silent)]
            return ProbeOutcome(name, findings, time.perf_counter() - t0, {})
        elapsed = time.perf_counter() - t0
        findings = [Finding.from_dict(d) for d in msg.get("findings", ())]
        if _stopped(self._proc.pid):
            # The module stopped its parent (SIGSTOP): the keeper can no
            # longer reap or clean up after it.
            text = (
                "The worker's parent process (the kit's keeper, the module's "
                "os.getppid()) was stopped during the probe (SIGSTOP or a "
                "stop signal from the module); the worker and the keeper were "
                "killed."
            )
            self._drop(kill=True)
            findings = [failed("robust.no-crash", name, text)]
            return ProbeOutcome(name, findings, elapsed, dict(msg.get("stats") or {}))
        if msg.get("type") == "fatal" or msg.get("recycle"):
            self._drop(kill=False)
        stats = dict(msg.get("stats") or {})
        if not msg.get("isolation"):
            judged = {f.clause for f in findings}
            findings += [passed(c) for c in GENERIC_CLAUSES if c not in judged]
            if not (stats.get("isolation") or {}).get("started"):
                findings = [_unexercised(f, name) for f in findings]
        return ProbeOutcome(name, findings, elapsed, stats)

    def _silence(self) -> float:
        """Seconds a worker in a probe may go without a sign of life."""
        return self.budgets.callback_wall + SILENCE_GRACE

    def _receive(self, deadline: float):
        """The worker's answer to the probe in progress: its result,
        :data:`_TIMEOUT` at *deadline*, or :data:`_SILENT` when it sent no
        sign of life for longer than the callback budget and
        :data:`SILENCE_GRACE`."""
        silence = self._silence()
        alive = time.perf_counter()
        while True:
            msg = self._results.read(min(deadline, alive + silence))
            if msg is _TIMEOUT:
                return msg if time.perf_counter() >= deadline else _SILENT
            if msg.get("id") != self._seq:
                continue
            alive = time.perf_counter()
            if msg.get("type") == "beat":
                continue
            if msg.get("type") == "memory":  # said before a result, or a death
                self._memory = True
                continue
            return msg

    def _died(self, probe: str, offset: int, gone: _ChildGone) -> Finding:
        """The child ended before answering: robust.no-crash, or
        robust.memory if the worker had reported a MemoryError (the log's
        text, which the module can write, is not evidence of one)."""
        # It is exiting: the keeper's report, else SIGKILL.
        if gone.report:
            report, keeper = gone.report, None
            self._drop(kill=False)
        else:
            report, keeper = self._finish(kill=gone.garbled is not None)
        tail = self._tail(offset)
        clause = "robust.memory" if self._memory else "robust.no-crash"
        where = _located(tail, self.target)
        if gone.garbled is not None:
            text = (
                f"The worker process running the scheduler sent a garbled result "
                f"line{where} ({gone.garbled!r}): the module tampered with the "
                "kit's result channel (json, os.write or the worker's file "
                "descriptors); the worker was killed."
            )
        elif report is None:
            text = (
                f"The worker's parent process (the kit's keeper, which the module "
                f"sees as os.getppid()) {_status(keeper)[3:]} before the worker "
                f"answered{where}: the module killed its parent or its process "
                "group; the worker was killed."
            )
        elif report.get("cause"):
            text = (
                f"The worker's parent process (the kit's keeper, which the module "
                f"sees as os.getppid()) received {report['cause']}{where}: the "
                "module signalled its parent; the worker was killed."
            )
        else:
            status = _status(report.get("status"))
            text = f"The worker process running the scheduler died{where}: {status}."
        if not tail.strip():
            tail = "(the worker's log is empty)"
        return failed(clause, probe, text, traceback=tail)

    def _hung(self, probe: str, wall: float, offset: int, silent: float = 0) -> Finding:
        """The probe overran its wall budget, or the worker was *silent*
        (seconds without a sign of life): stacks, then SIGKILL."""
        mark = self._log_size()
        proc = self._proc
        try:
            os.kill(self._worker, signal.SIGUSR1)
        except OSError:
            pass
        deadline = time.perf_counter() + STACK_DUMP_WAIT
        size = mark
        while time.perf_counter() < deadline and not _exited(proc):
            time.sleep(0.1)
            grown = self._log_size()
            if grown > mark and grown == size:
                break  # written and settled
            size = grown
        self._drop(kill=True)
        stacks = self._tail(mark).strip() or self._tail(offset).strip()
        where = _located(stacks, self.target).replace(" at ", " (stuck at ", 1)
        if silent:
            what = (
                f"The worker running the scheduler gave no sign of life for "
                f"{silent:g} s{where and where + ')'}: its watchdog thread could not "
                "run, so the scheduler held the interpreter lock in C code (a long "
                "computation that never lets other threads run) or stopped the "
                "process"
            )
        else:
            what = (
                f"The probe did not finish within its wall budget of {wall:g} s"
                f"{where and where + ')'}"
            )
        text = (
            f"{what}; the worker was sent SIGUSR1 for its thread stacks, then SIGKILL."
        )
        return failed("robust.no-hang", probe, text, traceback=stacks)


def preflight(
    target: str, module_args: Sequence[str] = (), timeout: float = 30.0
) -> str | None:
    """Import the module in a child: return a one-line message for a
    usage/input error (file not found, syntax error, ImportError/exception
    at import, a dotted module that cannot be found, a missing ``:Class``,
    *module_args* that the module refuses at load although it loads
    without them); None if it imported, or if it hung or crashed, or
    failed to load even without arguments (those become failed clauses
    later, not usage errors).  The child is killed after *timeout* seconds
    and always reaped."""
    res_r, res_w = os.pipe()
    args = ["--preflight", target, "--results-fd", str(res_w)]
    if module_args:
        args += ["--preflight-args", json.dumps(list(module_args))]
    try:
        proc = _spawn(args, (res_w,), subprocess.DEVNULL)
    except BaseException:
        os.close(res_r)
        raise
    finally:
        os.close(res_w)
    try:
        msg = _Lines(res_r, proc).read(time.perf_counter() + timeout)
    except _ChildGone:
        msg = None
    finally:
        os.close(res_r)
        # The worker exits once it has answered: the keeper then cleans up.
        _end(proc, EXIT_GRACE if isinstance(msg, dict) else 0.0)
    if isinstance(msg, dict) and msg.get("error"):
        return str(msg["error"]).splitlines()[0]
    return None


__all__ = ["Budgets", "ProbeOutcome", "Runner", "preflight"]
