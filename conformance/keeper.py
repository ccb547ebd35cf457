"""The worker's parent process: what the scheduler under test can reach of the kit.

``python -m conformance.keeper WORKER-ARGS...`` is started by
:mod:`conformance.runner` in a session of its own; it starts
``python -m conformance.worker WORKER-ARGS...`` in a process group of its
own and waits for it.  The module under test runs in the worker, so the
keeper is what ``os.getppid()`` names there: a module that kills or
signals its parent hits the keeper, never the kit (the pytest process
that holds the run's results).

* Every catchable signal sent to the keeper (SIGINT, SIGTERM, SIGHUP,
  SIGUSR1, ...) is taken as the module attacking its parent: the keeper
  kills the worker and says who sent what.  A SIGKILL or SIGSTOP of the
  keeper cannot be caught; the runner sees the keeper die or stop.
* On Linux the keeper is a child subreaper (``PR_SET_CHILD_SUBREAPER``), so
  the processes the module starts stay its descendants even after a
  ``setsid()`` or a double fork; the worker kills them after each probe,
  and the keeper kills whatever is left once the worker has ended.  Where
  the call is not available the keeper still kills the descendants it
  can see.
* Once the worker has ended and its descendants are gone, the keeper
  writes one line on the results pipe, ``{"type": "exit", "status": S,
  "cause": TEXT or null}`` (``S`` as :attr:`subprocess.Popen.returncode`:
  the exit code, or minus the signal that killed the worker), and exits 0.
* If the kit died (a SIGKILL leaves it no time to clean up), the keeper
  then removes the kit's folder for this worker (``$SCHEDKIT_SCRATCH``,
  the log and hypothesis's files).

The worker's stdout and stderr (the log the runner quotes) are the
keeper's, inherited.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import sys
import time

#: ``prctl`` option that makes orphaned descendants ours (Linux >= 3.4).
PR_SET_CHILD_SUBREAPER = 36
#: ``prctl`` option: a signal for us when our parent (the kit) dies.
PR_SET_PDEATHSIG = 1
#: Seconds the keeper waits, once the kit has closed the results pipe, for
#: the kit to be gone before it decides whether to remove the kit's folder.
KIT_EXIT_WAIT = 1.0
#: Signals taken as the module signalling its parent.
TRAPPED = tuple(
    getattr(signal, name)
    for name in (
        "SIGINT",
        "SIGTERM",
        "SIGHUP",
        "SIGQUIT",
        "SIGUSR1",
        "SIGUSR2",
        "SIGALRM",
        "SIGPIPE",
        "SIGTSTP",
        "SIGTTIN",
        "SIGTTOU",
        "SIGXCPU",
        "SIGXFSZ",
        "SIGVTALRM",
        "SIGPROF",
    )
    if hasattr(signal, name)
)


# Bound when the kit imports this module, before any scheduler module
# loads: the worker reads /proc after each probe, and a module that
# replaces builtins.open or os.listdir must not make that fail.
_open, _listdir = io.open, os.listdir


def _prctl(option: int, value: int) -> bool:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(option, value, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def become_subreaper() -> bool:
    """Make this process a child subreaper; False where that is unavailable."""
    return _prctl(PR_SET_CHILD_SUBREAPER, 1)


def process_of(pid: int | str) -> tuple[int, str] | None:
    """``(parent pid, state letter)`` of *pid* from ``/proc/PID/stat``, or
    None (gone, or no /proc)."""
    try:
        with _open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    # "pid (comm) state ppid ...": comm may hold spaces and parentheses
    fields = stat.rpartition(b")")[2].split()
    if len(fields) < 2:
        return None
    return int(fields[1]), fields[0].decode()


def process_table() -> dict[int, tuple[int, str]]:
    """``{pid: (parent pid, state letter)}`` of every process in /proc
    (empty without /proc)."""
    try:
        entries = _listdir("/proc")
    except OSError:
        return {}
    table = {}
    for entry in entries:
        if entry.isdigit():
            found = process_of(entry)
            if found is not None:
                table[int(entry)] = found
    return table


def descendants(root: int, table: dict | None = None) -> list[int]:
    """Every descendant of *root*, parents before their children."""
    table = process_table() if table is None else table
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    out, todo = [], list(children.get(root, ()))
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, ()))
    return out


def command_of(pid: int) -> str:
    """The command line of *pid*, or ``"?"``."""
    try:
        with _open(f"/proc/{pid}/cmdline", "rb") as f:
            raw = f.read(400)
    except OSError:
        return "?"
    return raw.rstrip(b"\0").replace(b"\0", b" ").decode(errors="replace") or "?"


def _returncode(status: int) -> int:
    if os.WIFSIGNALED(status):
        return -os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


def kill_all(pids, kill=os.kill) -> None:
    """SIGKILL every one of *pids* still there (*kill*: the worker passes
    the ``os.kill`` it saved before any module could replace it)."""
    for pid in pids:
        try:
            kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _sweep() -> None:
    """Kill and reap every descendant; returns when none is left."""
    me = os.getpid()
    while True:
        kill_all(descendants(me))
        try:
            os.wait()
        except ChildProcessError:
            return


def main(argv: list[str]) -> None:
    """Run the worker with *argv*; see the module docstring."""
    results_fd = int(argv[argv.index("--results-fd") + 1])
    kit = os.getppid()
    become_subreaper()
    # The kit killed (SIGKILL, say): we hear of it, and end the worker.
    _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != kit:
        os._exit(1)
    waited = {signal.SIGCHLD, *TRAPPED}
    signal.pthread_sigmask(signal.SIG_BLOCK, waited)
    worker = os.posix_spawn(
        sys.executable,
        [sys.executable, "-m", "conformance.worker", *argv],
        dict(os.environ, SCHEDKIT_KEEPER=str(os.getpid())),
        setpgroup=0,  # killpg(0) in the module spares the keeper
        setsigmask=(),
        setsigdef=TRAPPED,
    )
    if "--requests-fd" in argv:  # the worker's alone: EOF reaches it
        os.close(int(argv[argv.index("--requests-fd") + 1]))
    status, cause = None, None
    while status is None:
        info = signal.sigwaitinfo(waited)
        if info.si_signo != signal.SIGCHLD:
            if os.getppid() == kit and info.si_pid == kit:
                continue  # the kit's spawning thread ended: not a death
            if os.getppid() != kit:
                cause = cause or "nothing: the kit went away"
            elif cause is None:
                sender = info.si_pid
                who = "the worker" if sender == worker else f"process {sender}"
                cause = (
                    f"{signal.Signals(info.si_signo).name} from {who} "
                    f"({command_of(sender)})"
                )
            try:
                os.kill(worker, signal.SIGKILL)
            except OSError:
                pass
            continue
        while True:  # reap whatever ended: the worker, or adopted orphans
            try:
                pid, code = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            if pid == worker:
                status = _returncode(code)
    _sweep()
    report = {"type": "exit", "status": status, "cause": cause}
    data = (json.dumps(report) + "\n").encode()
    try:
        os.write(results_fd, data)
    except BrokenPipeError:  # (SIGPIPE is blocked) the kit closed its end
        # A dying kit closes its files before its children are given to
        # another parent: the worker may have ended at EOF on its requests
        # while the kit is still ours.  Give it a moment to be gone.
        deadline = time.monotonic() + KIT_EXIT_WAIT
        while os.getppid() == kit and time.monotonic() < deadline:
            time.sleep(0.01)
    except OSError:
        pass
    scratch = os.environ.get("SCHEDKIT_SCRATCH", "")
    if os.getppid() != kit and os.path.basename(scratch).startswith("schedkit-worker-"):
        # The kit died without its cleanup (SIGKILL): its folder goes too.
        shutil.rmtree(scratch, ignore_errors=True)
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
