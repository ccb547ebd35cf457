"""The kit's child process: runs probes where a hostile scheduler can do no harm.

``python -m conformance.worker`` is started by :class:`conformance.runner.Runner`,
never by hand.  One worker serves one scheduler target and runs the probes
it is asked for, one at a time, with :func:`conformance.probes.execute`.

.. rubric:: Protocol

Two inherited pipes carry JSON objects, one per line: ``--requests-fd``
from the parent, ``--results-fd`` to it.  File descriptors 1 and 2 are a
log file (what the scheduler prints, the worker's diagnostics), whose tail
the parent quotes as evidence.

* At start the worker sends ``{"type": "ready", "pid": N}``.
* A request is ``{"id", "op": "probe", "probe", "target", "args", "policy",
  "seed", "examples", "limits", "callback_wall", "memory_mb"}``, ``limits``
  as for :func:`~conformance.probes.execute`.
* Its answer is ``{"type": "result", "id", "findings", "stats",
  "isolation", "recycle"}``: ``findings`` as ``Finding.to_dict()``;
  ``isolation`` names the generic clause that failed (``findings`` is then
  that one failure: the probe's other clauses get no verdict) or is null;
  ``recycle`` asks the parent to replace the worker.
* The worker ignores SIGINT (a Ctrl-C interrupts the kit, which ends the
  worker): a ``KeyboardInterrupt`` inside the probe was raised by the
  scheduler, and fails ``robust.no-crash`` like any exception that
  escapes it.
* When the watchdog trips, the answer has ``"type": "fatal"`` and the
  worker ends itself with ``os._exit(70)`` (:data:`EXIT_WATCHDOG`).
* When its request or result pipe is closed or replaced under it (the
  module's ``os.close``, ``os.closerange`` or ``os.dup2`` on descriptors
  it did not open; under flux-core 0.88, which runs a Python module in a
  process of its own, its connection to the broker), the worker ends
  itself with ``os._exit(71)`` (:data:`EXIT_PIPES_LOST`): the watchdog
  looks at them every :data:`POLL` seconds, and a failed read or write
  on them looks too.
* While a probe runs, the watchdog thread sends ``{"type": "beat", "id"}``
  every :data:`BEAT` seconds: a scheduler that holds the interpreter lock
  in C code (``sum(range(10**13))``) starves that thread as well as the
  checks it makes, and the parent, missing the beats, ends the worker.
* When the module raises ``MemoryError``, ``{"type": "memory", "id"}`` is
  sent at once, before the answer: a death that follows is then judged
  ``robust.memory``, whatever the log says.
* Every text sent is clipped (:func:`bounded`): :data:`MAX_ITEM`
  characters per message, note or line, :data:`MAX_TEXT` per traceback
  or transcript excerpt.
* The worker's parent is :mod:`conformance.keeper`; after each probe the
  worker kills every process the module started that is still there
  (``robust.no-stray-threads`` names those that were running).
* End of file on the request pipe, or ``{"op": "exit"}``, ends the worker.

``--preflight TARGET`` only imports the target (and, with
``--preflight-args JSON``, loads it on a mock broker with and without
those arguments, to tell arguments it refuses from a module that cannot
load) and answers ``{"type": "preflight", "error": TEXT or null}``.

.. rubric:: Budgets enforced here (see :mod:`conformance.runner`)

A watchdog thread times every reactor callback (``callbacks.prompt``) and
every module load and ``mod_main`` phase (``robust.no-hang``) against
``callback_wall``: an overrun fails the clause with the stuck thread's
stack and the scheduler's own file and line, and the worker exits.  The
``messages_per_instant`` limit also bounds the callbacks of one reactor
iteration, which catches a zero-delay timer re-armed from its own callback
(it never yields to the broker); the broker itself bounds the reactor
iterations of one module at one instant (``iterations_per_instant``).
``--memory-mb`` is ``RLIMIT_AS``.  After the probe, the thread pools the
module left are shut down, as the exit of its own process does under
flux-core 0.88; a thread of the module still running then fails
``robust.no-stray-threads`` unless it is a daemon (which ends with that
process: the worker is replaced instead).

SIGINT is ignored: the parent handles Ctrl-C and kills the worker.  On
SIGUSR1 (a probe over its wall budget) and on fatal signals,
:mod:`faulthandler` writes every thread's stack to the log; ``os._exit`` or
a fatal ``os.kill`` of the worker itself logs its caller first.
"""

from __future__ import annotations

import argparse
import faulthandler
import functools
import json
import os
import signal
import sys
import sysconfig
import threading
import time
import traceback

from conformance.findings import FAIL, Finding, failed
from conformance.keeper import command_of, descendants, kill_all, process_table
from conformance.process_limits import (
    WatchedLimits,
    cap_address_space,
    cap_file_size,
)

#: Exit status of a worker stopped by its own watchdog.
EXIT_WATCHDOG = 70
#: Exit status of a worker whose pipes to the kit were closed or replaced
#: under it: the module closed or overwrote descriptors it did not open.
EXIT_PIPES_LOST = 71
#: Budget clauses :func:`~conformance.probes.execute` itself may fail.
BUDGET_CLAUSES = ("robust.memory", "robust.no-livelock")
#: How often the watchdog looks (seconds).
POLL = 0.05
#: How often, during a probe, the watchdog tells the parent it can run
#: (seconds): a scheduler that holds the interpreter lock in C code (or
#: stops the worker) stops these signs of life, and the parent ends it.
BEAT = 0.5
#: How long finishing threads get to end before they count as stray (s).
THREAD_GRACE = 1.0
#: Largest stack or transcript text put in evidence (characters).
MAX_TEXT = 12_000
#: Largest single text the worker sends (characters): a message, a note,
#: one line of a traceback or transcript.  Longer ones keep their start
#: and say ``[... N characters cut]``; the module chooses these texts.
MAX_ITEM = 4096
#: Fields of a finding's evidence that are many lines, each clipped to
#: :data:`MAX_ITEM`, the whole to :data:`MAX_TEXT`.
_MULTILINE = ("excerpt", "traceback")

_real_exit, _real_kill = os._exit, os.kill
# Likewise the watchdog's clock and sleep: a module that replaces
# time.perf_counter or time.sleep does not blind it.
_clock, _sleep = time.perf_counter, time.sleep
# Bound before any module loads: one that patches json.dumps, json.loads,
# os.write or os.fstat in its process does not garble what the worker
# reports, or the requests it reads.
_dumps, _loads, _write, _fstat = json.dumps, json.loads, os.write, os.fstat


def _clip(text: str) -> str:
    """The end of *text*, at most :data:`MAX_TEXT` characters, whole lines."""
    if len(text) <= MAX_TEXT:
        return text
    return "...\n" + text[-MAX_TEXT:].partition("\n")[2]


def clip_item(text: str, limit: int = MAX_ITEM) -> str:
    """*text* cut to its first *limit* characters, saying how many went."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}[... {len(text) - limit} characters cut]"


def bounded(obj, key: str = ""):
    """*obj* (JSON data) with every string clipped (:func:`clip_item`;
    evidence excerpts and tracebacks line by line, then :func:`_clip`), so
    what the module said cannot swamp the pipe, the kit or the terminal."""
    if isinstance(obj, str):
        if key in _MULTILINE and len(obj) > MAX_ITEM:
            lines = obj.split("\n")
            return _clip("\n".join(clip_item(line) for line in lines))
        return clip_item(obj)
    if isinstance(obj, dict):
        return {k: bounded(v, k if isinstance(k, str) else "") for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [bounded(v) for v in obj]
    return obj


class _Channel:
    """The results pipe: whole JSON lines, from any thread, every text in
    them clipped (:func:`bounded`)."""

    def __init__(self, fd: int):
        self.fd, self.lock = fd, threading.Lock()

    def send(self, obj: dict) -> None:
        data = _dumps(bounded(obj), default=lambda o: clip_item(str(o)))
        view = memoryview((data + "\n").encode())
        with self.lock:
            while view:
                view = view[_write(self.fd, view) :]


class _Activity:
    """What the watchdog times: a callback, a load or a mod_main phase."""

    __slots__ = ("kind", "subject", "link", "broker", "thread", "start")

    def __init__(self, kind, subject, link=None, broker=None):
        self.kind, self.subject, self.link, self.start = kind, subject, link, 0.0
        self.broker = broker if broker is not None else getattr(link, "broker", None)
        # mod_main's thread is known once it starts (see _module_main)
        self.thread = None if kind == "mod_main" else threading.get_ident()


class _State:
    """What the hooks and the watchdog share about the current probe."""

    def __init__(self):
        self.channel: _Channel | None = None
        #: The resource limits watched, once set.
        self.limits: WatchedLimits | None = None
        # The keeper (conformance.keeper) that started us, if it did.
        self.keeper = int(os.environ.pop("SCHEDKIT_KEEPER", 0) or 0)
        if self.keeper != os.getppid():
            self.keeper = 0
        self.begin({})

    def begin(self, request: dict) -> None:
        self.request = request
        self.probing = bool(request)  # the watchdog sends signs of life
        self.callback_wall = float(request.get("callback_wall") or 5.0)
        self.dispatch_limit = (request.get("limits") or {}).get("messages_per_instant")
        self.stack, self.events, self.callbacks, self.slowest = [], [], 0, 0.0
        #: How many times the module's mod_main was entered this probe.
        self.started = 0
        #: Findings reported beside an event's (the referee's violations on
        #: a broker that livelocked, one per clause).
        self.beside: list[Finding] = []

    def timed(self, activity: _Activity, fn, *args):
        """Call *fn* while the watchdog times *activity*."""
        activity.start = _clock()
        self.stack.append(activity)
        try:
            return fn(*args)
        finally:
            self.stack.remove(activity)
            self.slowest = max(self.slowest, _clock() - activity.start)

    def fail(self, clause: str, text: str, broker=None, **more) -> Finding:
        probe = self.request.get("probe", "")
        return failed(clause, probe, text, **_excerpt(broker), **more)


STATE = _State()


# -- evidence: where the scheduler is -------------------------------------------


@functools.cache
def _kit_dirs() -> tuple[str, ...]:
    # Read from the packages' search paths (``__path__``): a package's
    # ``__file__`` may be None (a namespace package, or a module the code
    # under test put in its place in sys.modules).
    import flux

    import conformance
    import mock_broker

    dirs = set()
    for package in (conformance, mock_broker, flux):
        dirs.update(p for p in getattr(package, "__path__", ()) if isinstance(p, str))
    dirs.update(v for k, v in sysconfig.get_paths().items() if "stdlib" in k)
    return tuple(os.path.realpath(d) + os.sep for d in dirs)


def _where(frame) -> str:
    """Where the scheduler is in *frame*'s stack: the innermost frame in its
    own file, else outside the kit, flux and the standard library."""
    path = STATE.request.get("target", "").partition(":")[0]
    own = os.path.realpath(path) if path.endswith(".py") else None
    # "<frozen runpy>", "<string>": pseudo-files, kept as they are (realpath
    # would make them look like files in the current folder).
    pairs = [
        (f, name if name.startswith("<") else os.path.realpath(name))
        for f, name in (
            (f, f.f_code.co_filename) for f, _ in traceback.walk_stack(frame)
        )
    ]
    ranked = [f for f, name in pairs if name == own]
    ranked += [f for f, name in pairs if not name.startswith((*_kit_dirs(), "<"))]
    f = (ranked + [f for f, _ in pairs] + [None])[0]
    if f is None:
        return "an unknown place"
    return f"{f.f_code.co_filename}:{f.f_lineno} in {f.f_code.co_name}"


def _stack_of(ident) -> tuple[object, str]:
    """A thread's frame and its stack as text (the worker's hooks left out)."""
    frame = sys._current_frames().get(ident)
    if frame is None:
        return None, "(the thread has no Python stack)"
    entries = [e for e in traceback.extract_stack(frame) if e.filename != __file__]
    return frame, _clip("".join(traceback.format_list(entries)))


def _excerpt(broker) -> dict:
    try:
        t = broker.transcript
        return {"time": broker.elapsed, "excerpt": _clip(t.excerpt(len(t) - 1))}
    except Exception:  # noqa: BLE001 - no broker, or evidence out of reach
        return {}


# -- the watchdog ----------------------------------------------------------------------


def _describe(activity: _Activity) -> str:
    if activity.kind == "load":
        return f"loading {activity.subject} (import, then mod_main up to its reactor)"
    name = getattr(activity.link, "name", "the module")
    if activity.kind == "mod_main":
        return f"mod_main of {name} ({activity.subject})"
    callback = getattr(getattr(activity.subject, "__self__", None), "callback", None)
    msg = (getattr(activity.subject, "__defaults__", None) or (None,))[0]
    what = getattr(callback, "__qualname__", None) or getattr(msg, "topic", "?")
    return f"a reactor callback of {name} ({what})"


def _stuck(activity: _Activity) -> Finding:
    """The failure for an activity that overran the callback budget."""
    thread = activity.thread or getattr(activity.link, "_kit_tid", None)
    frame, stack = _stack_of(thread)
    text = (
        f"{_describe(activity)} ran for more than {STATE.callback_wall:g} s of wall "
        f"time (the callback budget) without returning; stuck at {_where(frame)}.  "
        "The worker was stopped."
    )
    clause = "callbacks.prompt" if activity.kind == "callback" else "robust.no-hang"
    return STATE.fail(clause, text, activity.broker, traceback=stack)


#: ``(descriptor, (device, inode))`` of the worker's pipes to the kit.
_PIPES: list[tuple[int, tuple[int, int]]] = []


def _identity(fd: int) -> tuple[int, int] | None:
    try:
        st = _fstat(fd)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _keep_pipes(*fds: int | None) -> None:
    """Remember what the worker's pipes to the kit are (see
    :func:`_pipes_lost`)."""
    _PIPES[:] = [(fd, _identity(fd)) for fd in fds if fd is not None]


def _pipes_lost() -> bool:
    """Is a pipe to the kit closed, or another file now, under its
    descriptor?"""
    return any(_identity(fd) != was for fd, was in _PIPES)


def _log_limit_changes() -> None:
    limits = STATE.limits
    if limits is None:
        return
    try:
        for line in limits.changes():
            _write(2, line.encode())
    except (OSError, MemoryError):
        pass  # the log may be gone too; the death says the rest


def _end_if_pipes_lost() -> None:
    if _pipes_lost():
        _real_exit(EXIT_PIPES_LOST)


def _watchdog(channel: _Channel) -> None:
    beat = 0.0
    while True:
        _sleep(POLL)
        _end_if_pipes_lost()
        if _clock() - beat >= BEAT:
            beat = _clock()
            _log_limit_changes()
            try:
                if STATE.probing:
                    channel.send({"type": "beat", "id": STATE.request.get("id")})
            except MemoryError:
                pass  # the next one
            except OSError:
                _end_if_pipes_lost()
                _real_exit(EXIT_WATCHDOG)  # the parent is gone
        try:
            activity = STATE.stack[-1] if STATE.stack else None
            late = activity and _clock() - activity.start
            if not late or late <= STATE.callback_wall:
                continue
            finding = _stuck(activity)
            answer = {"type": "fatal", "id": STATE.request.get("id"), "stats": {}}
            answer.update(findings=[finding.to_dict()], recycle=True)
            channel.send(dict(answer, isolation=finding.clause))
        except (MemoryError, IndexError):
            continue  # try again at the next look
        except BaseException:  # noqa: BLE001 - the parent sees the exit anyway
            traceback.print_exc()
        _real_exit(EXIT_WATCHDOG)


# -- hooks into the mock broker ---------------------------------------------------------


def _memory_event(exc: BaseException, link, broker=None, name=None) -> None:
    """A module's MemoryError: free what its frames hold; record it once,
    and tell the parent at once (the worker may not live to answer: a
    death after it is then ``robust.memory``, not a crash)."""
    traceback.clear_frames(exc.__traceback__)
    if any(f.clause == "robust.memory" for f in STATE.events):
        return
    if STATE.channel is not None:
        try:
            STATE.channel.send({"type": "memory", "id": STATE.request.get("id")})
        except (OSError, MemoryError):
            pass
    budget = STATE.request.get("memory_mb")
    name = name or getattr(link, "name", "the module")
    text = f"{name} ran out of memory (MemoryError) under the {budget} MiB budget"
    tb = _clip("".join(traceback.format_exception(exc)))
    broker = broker if broker is not None else getattr(link, "broker", None)
    STATE.events.append(STATE.fail("robust.memory", text, broker, traceback=tb))


def install_hooks() -> None:
    """Wrap the mock broker's dispatch points: the watchdog times them, the
    budgets are checked, and what a probe might swallow is recorded."""
    from mock_broker.runtime.broker import BrokerLivelock, MockBroker
    from mock_broker.runtime.module_host import ModuleLink, ModuleLoadError
    from mock_broker.runtime.reactor import Reactor

    invoke, iterate = Reactor._invoke, Reactor.iterate
    load, step, exited = MockBroker.load, MockBroker._step, MockBroker._module_exited
    link_init, module_main = ModuleLink.__init__, ModuleLink._main
    start, resume = ModuleLink.start, ModuleLink.resume

    def _invoke(self, fn):
        link = getattr(self, "_kit_link", None)
        ok = STATE.timed(_Activity("callback", fn, link), invoke, self, fn)
        STATE.callbacks += 1
        if not ok and isinstance(self.exception, MemoryError):
            _memory_event(self.exception, link)
        limit = STATE.dispatch_limit
        if limit and self.dispatched - getattr(self, "_kit_base", 0) > limit:
            self._kit_base = self.dispatched
            raise BrokerLivelock(
                f"{limit} callbacks of {getattr(link, 'name', 'a module')} in one "
                f"reactor iteration at t={self.clock.elapsed:.3f}, without the "
                f"reactor yielding to the broker (limit {limit})"
            )
        return ok

    def _iterate(self):
        self._kit_base = self.dispatched
        return iterate(self)

    def _load(self, scheduler, args=(), name=None):
        activity = _Activity("load", scheduler, broker=self)
        try:
            return STATE.timed(activity, load, self, scheduler, args, name)
        except ModuleLoadError as exc:
            if isinstance(exc.__cause__, MemoryError):  # at import
                _memory_event(exc.__cause__, None, self, name or scheduler)
            raise

    def _step(self, modules=True):
        try:
            return step(self, modules)
        except BrokerLivelock as exc:
            if getattr(exc, "broker", None) is None:  # the first to see it
                exc.broker = self
                STATE.events.append(STATE.fail("robust.no-livelock", str(exc), self))
                from conformance.probes import referee_findings

                probe = STATE.request.get("probe", "")
                STATE.beside = referee_findings(probe, self, first_only=True)
            raise

    def _module_exited(self, link, *args, **kwargs):
        if isinstance(link.exit_error, MemoryError):
            _memory_event(link.exit_error, link)
        return exited(self, link, *args, **kwargs)

    def _link_init(self, *args, **kwargs):
        link_init(self, *args, **kwargs)
        self.reactor._kit_link = self

    def _module_main(self):
        self._kit_tid = threading.get_ident()
        return module_main(self)

    def _start(self):
        STATE.started += 1
        activity = _Activity("mod_main", "until it enters its reactor", self)
        return STATE.timed(activity, start, self)

    def _resume(self):
        activity = _Activity("mod_main", "after its reactor stopped", self)
        return STATE.timed(activity, resume, self)

    Reactor._invoke, Reactor.iterate = _invoke, _iterate
    MockBroker.load, MockBroker._step = _load, _step
    MockBroker._module_exited = _module_exited
    # The threads a module starts are no daemons unless it says, as on a
    # real module's main thread.
    ModuleLink.thread_daemon = False
    ModuleLink.__init__, ModuleLink._main = _link_init, _module_main
    ModuleLink.start, ModuleLink.resume = _start, _resume


def trace_exits() -> None:
    """Log the caller of ``os._exit`` and of a fatal ``os.kill`` of ourselves."""

    def log_caller(what: str) -> None:
        _log_limit_changes()  # what the module changed, before it ends
        stack = "".join(traceback.format_stack(sys._getframe(2)))
        text = f"schedkit worker: {what}, called from:\n{stack}"
        os.write(2, text.encode(errors="replace"))

    def _exit(status):
        log_caller(f"os._exit({status})")
        _real_exit(status)

    def kill(pid, sig):
        if sig != 0 and pid in (0, os.getpid(), -os.getpgrp()):
            log_caller(f"os.kill({pid}, {sig})")
        return _real_kill(pid, sig)

    os._exit, os.kill = _exit, kill


# -- one probe ---------------------------------------------------------------------------


def _end_idle_executors(baseline: set) -> None:
    """Shut down the thread pools (``ThreadPoolExecutor``) whose workers
    the module left, as the interpreter's exit does in the module's own
    process under flux-core 0.88: an idle worker then ends, a busy one
    ends after its task.  The pool is found from its worker's frame."""
    pools = sys.modules.get("concurrent.futures.thread")
    if pools is None:
        return
    frames = sys._current_frames()
    for t in list(pools._threads_queues.keys()):
        if t in baseline or not t.is_alive():
            continue
        frame = frames.get(t.ident)
        while frame is not None and frame.f_code is not pools._worker.__code__:
            frame = frame.f_back
        if frame is None:
            continue
        reference = frame.f_locals.get("executor_reference")
        executor = reference() if callable(reference) else None
        if isinstance(executor, pools.ThreadPoolExecutor):
            try:
                # The standard method, whatever a subclass made of it.
                pools.ThreadPoolExecutor.shutdown(executor, wait=False)
            except Exception:  # noqa: BLE001 - its workers are judged as left
                pass


def _stray_threads(baseline: set) -> tuple[Finding | None, bool]:
    """A failure naming the live threads the kit did not start that would
    keep the module's process from exiting (not daemons), if any; and
    whether daemon threads of the module are still running (the worker is
    then replaced: in flux-core 0.88 they end with the module's process).
    """
    _end_idle_executors(baseline)
    deadline = _clock() + THREAD_GRACE
    strays, daemons = [], False
    for t in threading.enumerate():
        if t not in baseline:
            t.join(max(0.0, deadline - _clock()))  # a module finishing
            if t.is_alive():
                if t.daemon:
                    daemons = True
                else:
                    strays.append(t)
    if not strays:
        return None, daemons
    names, stacks = [], []
    for t in strays:
        frame, stack = _stack_of(t.ident)
        names.append(f"{t.name!r} (at {_where(frame)})")
        stacks.append(f"Thread {t.name!r} (daemon={t.daemon}):\n{stack}")
    text = (
        f"{len(strays)} thread(s) of the module still running after the probe, "
        "not daemons (in flux-core 0.88 the module's process waits for them at "
        "exit, and never ends): "
    )
    tb = _clip("\n".join(stacks))
    finding = STATE.fail(
        "robust.no-stray-threads", text + ", ".join(names), traceback=tb
    )
    return finding, daemons


def _stray_processes() -> Finding | None:
    """Kill every process the module started that is still there after the
    probe (the keeper's descendants but this worker: a ``setsid()`` or a
    double fork does not hide them, the keeper being a subreaper); a
    failure naming those that were running, if any.  Does nothing when the
    keeper is not (or no longer) this worker's parent."""
    keeper = STATE.keeper
    if not keeper or os.getppid() != keeper:
        return None
    me = os.getpid()
    table = process_table()
    found = [pid for pid in descendants(keeper, table) if pid != me]
    running = [pid for pid in found if table[pid][1] != "Z"]  # zombies: ended
    names = [f"{pid} ({command_of(pid)})" for pid in running]
    kill_all(found, _real_kill)
    for pid in found:  # ours to reap; the keeper reaps those it adopted
        if table[pid][0] == me:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
    if not running:
        return None
    text = (
        f"{len(running)} process(es) the module started still running after the "
        f"probe: {', '.join(names[:8])}{', ...' if len(names) > 8 else ''}; "
        "the kit killed them"
    )
    return STATE.fail("robust.no-stray-threads", text)


def run_probe(request: dict, baseline: set) -> dict:
    """Run one requested probe; return the answer to send back."""
    STATE.begin(request)
    try:
        return _run_probe(request, baseline)
    finally:
        STATE.probing = False


def _run_probe(request: dict, baseline: set) -> dict:
    from conformance.probes import execute

    findings, stats, escaped = [], {}, []
    options = {k: request[k] for k in ("policy", "seed", "examples") if k in request}
    try:
        findings, stats = execute(
            request["probe"],
            request["target"],
            request.get("args") or [],
            limits=request.get("limits") or {},
            **options,
        )
    except BaseException as exc:  # noqa: BLE001 - SystemExit at import, say
        traceback.clear_frames(exc.__traceback__)
        clause = "robust.memory" if isinstance(exc, MemoryError) else "robust.no-crash"
        from mock_broker.runtime.module_host import exception_text

        try:
            tb = _clip("".join(traceback.format_exception(exc)))
        except BaseException as inner:  # noqa: BLE001 - the module's __str__
            tb = f"(no traceback: formatting it raised {type(inner).__name__})"
        text = f"the probe ended with {exception_text(exc, ctrl_c=False)}"
        if isinstance(exc, KeyboardInterrupt):
            # SIGINT is ignored here (a Ctrl-C interrupts the kit itself):
            # the module raised it, and the mock broker lets it through.
            text += (
                " (raised by the scheduler, not a Ctrl-C: the worker ignores SIGINT)"
            )
        escaped.append(STATE.fail(clause, text, traceback=tb))
    # What the hooks saw came first; then what ended the probe; then threads.
    budget = [f for f in findings if f.verdict == FAIL and f.clause in BUDGET_CLAUSES]
    cause = next(iter(STATE.events + escaped + budget), None)
    daemons = False
    if cause is None:
        cause, daemons = _stray_threads(baseline)
    processes = _stray_processes()  # always killed; reported if nothing else
    if cause is None:
        cause = processes
    if cause is not None:
        findings = [cause]
        if cause.clause == "robust.no-livelock":
            findings += STATE.beside
    stats = dict(stats or {})
    stats["isolation"] = dict(
        pid=os.getpid(),
        started=STATE.started,
        callbacks=STATE.callbacks,
        slowest_callback=STATE.slowest,
    )
    findings = [f.to_dict() for f in findings]
    isolation = cause.clause if cause is not None else None
    answer = dict(type="result", id=request.get("id"), findings=findings, stats=stats)
    recycle = isolation is not None or daemons
    return dict(answer, isolation=isolation, recycle=recycle)


# -- the process ----------------------------------------------------------------------------


def preflight(target: str, args: list[str], channel: _Channel) -> None:
    """Import *target* once and, given *args*, see whether the module
    refuses them; send ``{"type": "preflight", "error": ...}``."""
    from mock_broker import flux_substitute

    flux_substitute.install()
    from mock_broker.runtime.load_check import refused_args
    from mock_broker.runtime.module_host import ModuleLoadError, _load_python_module

    path, colon, cls = target.partition(":")
    error = None
    try:
        _, module, _ = _load_python_module(path)
    except ModuleLoadError as exc:  # a MemoryError is robust.memory, later
        error = None if isinstance(exc.__cause__, MemoryError) else str(exc)
    else:
        if colon and not isinstance(getattr(module, cls, None), type):
            error = f"{target}: no class {cls!r} in {path}"
        elif refused := refused_args(target, args):
            # Arguments the module refuses are the caller's input error; a
            # module that cannot load even without them is left to the
            # clauses (load.reaches-reactor), with evidence.
            error = f"--args: the module refuses them: {refused}"
    channel.send({"type": "preflight", "error": error})


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m conformance.worker")
    parser.add_argument("--requests-fd", type=int)
    parser.add_argument("--results-fd", type=int, required=True)
    parser.add_argument("--memory-mb", type=int, default=4096)
    parser.add_argument("--log-mb", type=int, default=64)
    parser.add_argument("--preflight", metavar="TARGET")
    parser.add_argument("--preflight-args", default="[]", metavar="JSON")
    opts = parser.parse_args(argv)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for fd in (opts.requests_fd, opts.results_fd):  # not for the module's children
        if fd is not None:
            os.set_inheritable(fd, False)
    channel = STATE.channel = _Channel(opts.results_fd)
    cap_file_size(opts.log_mb)
    if opts.preflight is not None:
        cap_address_space(opts.memory_mb)
        try:
            preflight(opts.preflight, json.loads(opts.preflight_args), channel)
        finally:
            _real_exit(0)  # whatever the module left running
    faulthandler.enable(file=sys.stderr, all_threads=True)
    faulthandler.register(signal.SIGUSR1, file=sys.stderr, all_threads=True)
    from conformance.probes import all_probes
    from mock_broker.runtime import broker  # noqa: F401 - installs the substitute

    all_probes()
    try:  # warm: the module's load budget is not spent importing flux
        import flux.resource  # noqa: F401
        import flux.scheduler  # noqa: F401
    except Exception:  # noqa: BLE001, S110 - the module's load will say
        pass
    # hypothesis (robust.random-sequences) reads the current folder when
    # imported: a module that moves into a folder it then removes must not
    # make the kit's own import fail.
    import hypothesis.stateful  # noqa: F401
    import hypothesis.strategies  # noqa: F401

    _kit_dirs()  # read before any module can replace a package it names
    install_hooks()
    trace_exits()
    cap_address_space(opts.memory_mb)
    STATE.limits = WatchedLimits()
    name = "schedkit-watchdog"
    threading.Thread(target=_watchdog, args=(channel,), name=name, daemon=True).start()
    baseline = set(threading.enumerate())
    _keep_pipes(opts.requests_fd, opts.results_fd)
    channel.send({"type": "ready", "pid": os.getpid()})
    with os.fdopen(opts.requests_fd, "rb") as requests:
        try:
            for line in requests:
                request = _loads(line)
                if request.get("op") != "probe":
                    break
                channel.send(run_probe(request, baseline))
        except OSError:
            _end_if_pipes_lost()
            raise
        # The end: the kit's, or /dev/null put where the requests came.
        _end_if_pipes_lost()
        _PIPES.clear()  # closed on purpose from here on
    _real_exit(0)  # stray threads must not keep the worker alive


if __name__ == "__main__":
    main()
