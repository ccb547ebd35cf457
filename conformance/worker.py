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
* A ``KeyboardInterrupt`` raised inside the probe (by a scheduler
  callback) is answered ``{"type": "interrupted", "id"}``: the parent
  raises ``KeyboardInterrupt`` and the run ends as interrupted.
* When the watchdog trips, the answer has ``"type": "fatal"`` and the
  worker ends itself with ``os._exit(70)`` (:data:`EXIT_WATCHDOG`).
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
(it never yields to the broker).  ``--memory-mb`` is ``RLIMIT_AS``.  A
thread the scheduler leaves running fails ``robust.no-stray-threads``.

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

#: Exit status of a worker stopped by its own watchdog.
EXIT_WATCHDOG = 70
#: Budget clauses :func:`~conformance.probes.execute` itself may fail.
BUDGET_CLAUSES = ("robust.memory", "robust.no-livelock")
#: How often the watchdog looks (seconds).
POLL = 0.05
#: How long finishing threads get to end before they count as stray (s).
THREAD_GRACE = 1.0
#: Largest stack or transcript text put in evidence (characters).
MAX_TEXT = 12_000

_real_exit, _real_kill = os._exit, os.kill


def _clip(text: str) -> str:
    """The end of *text*, at most :data:`MAX_TEXT` characters, whole lines."""
    if len(text) <= MAX_TEXT:
        return text
    return "...\n" + text[-MAX_TEXT:].partition("\n")[2]


class _Channel:
    """The results pipe: whole JSON lines, from any thread."""

    def __init__(self, fd: int):
        self.fd, self.lock = fd, threading.Lock()

    def send(self, obj: dict) -> None:
        view = memoryview((json.dumps(obj, default=str) + "\n").encode())
        with self.lock:
            while view:
                view = view[os.write(self.fd, view) :]


class _Activity:
    """What the watchdog times: a callback, a load or a mod_main phase."""

    __slots__ = ("kind", "subject", "link", "broker", "thread", "start")

    def __init__(self, kind, subject, link=None, broker=None):
        self.kind, self.subject, self.link, self.start = kind, subject, link, 0.0
        self.broker = broker if broker is not None else getattr(link, "broker", None)
        # mod_main runs on the module's own thread (its id is known later)
        self.thread = None if kind == "mod_main" else threading.get_ident()


class _State:
    """What the hooks and the watchdog share about the current probe."""

    def __init__(self):
        self.begin({})

    def begin(self, request: dict) -> None:
        self.request = request
        self.callback_wall = float(request.get("callback_wall") or 5.0)
        self.dispatch_limit = (request.get("limits") or {}).get("messages_per_instant")
        self.stack, self.events, self.callbacks, self.slowest = [], [], 0, 0.0

    def timed(self, activity: _Activity, fn, *args):
        """Call *fn* while the watchdog times *activity*."""
        activity.start = time.perf_counter()
        self.stack.append(activity)
        try:
            return fn(*args)
        finally:
            self.stack.remove(activity)
            self.slowest = max(self.slowest, time.perf_counter() - activity.start)

    def fail(self, clause: str, text: str, broker=None, **more) -> Finding:
        probe = self.request.get("probe", "")
        return failed(clause, probe, text, **_excerpt(broker), **more)


STATE = _State()


# -- evidence: where the scheduler is -------------------------------------------


@functools.cache
def _kit_dirs() -> tuple[str, ...]:
    import flux

    import conformance
    import mock_broker

    dirs = {os.path.dirname(m.__file__) for m in (conformance, mock_broker, flux)}
    dirs.update(v for k, v in sysconfig.get_paths().items() if "stdlib" in k)
    return tuple(os.path.realpath(d) + os.sep for d in dirs)


def _where(frame) -> str:
    """Where the scheduler is in *frame*'s stack: the innermost frame in its
    own file, else outside the kit, flux and the standard library."""
    path = STATE.request.get("target", "").partition(":")[0]
    own = os.path.realpath(path) if path.endswith(".py") else None
    pairs = [
        (f, os.path.realpath(f.f_code.co_filename))
        for f, _ in traceback.walk_stack(frame)
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


def _watchdog(channel: _Channel) -> None:
    while True:
        time.sleep(POLL)
        try:
            activity = STATE.stack[-1] if STATE.stack else None
            late = activity and time.perf_counter() - activity.start
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


def _memory_event(exc: BaseException, link) -> None:
    """A module's MemoryError: free what its frames hold; record it once."""
    traceback.clear_frames(exc.__traceback__)
    if any(f.clause == "robust.memory" for f in STATE.events):
        return
    budget = STATE.request.get("memory_mb")
    text = (
        f"{getattr(link, 'name', 'the module')} ran out of memory (MemoryError) "
        f"under the {budget} MiB budget"
    )
    tb = _clip("".join(traceback.format_exception(exc)))
    STATE.events.append(
        STATE.fail("robust.memory", text, getattr(link, "broker", None), traceback=tb)
    )


def install_hooks() -> None:
    """Wrap the mock broker's dispatch points: the watchdog times them, the
    budgets are checked, and what a probe might swallow is recorded."""
    from mock_broker.runtime.broker import BrokerLivelock, MockBroker
    from mock_broker.runtime.module_host import ModuleLink
    from mock_broker.runtime.reactor import Reactor

    invoke, iterate = Reactor._invoke, Reactor.iterate
    load, step, exited = MockBroker.load, MockBroker._step, MockBroker._module_exited
    link_init, thread_main = ModuleLink.__init__, ModuleLink._thread_main
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
        return STATE.timed(activity, load, self, scheduler, args, name)

    def _step(self, modules=True):
        try:
            return step(self, modules)
        except BrokerLivelock as exc:
            if getattr(exc, "broker", None) is None:  # the first to see it
                exc.broker = self
                STATE.events.append(STATE.fail("robust.no-livelock", str(exc), self))
            raise

    def _module_exited(self, link):
        if isinstance(link.exit_error, MemoryError):
            _memory_event(link.exit_error, link)
        return exited(self, link)

    def _link_init(self, *args, **kwargs):
        link_init(self, *args, **kwargs)
        self.reactor._kit_link = self

    def _thread_main(self):
        self._kit_tid = threading.get_ident()
        return thread_main(self)

    def _start(self):
        activity = _Activity("mod_main", "until it enters its reactor", self)
        return STATE.timed(activity, start, self)

    def _resume(self):
        activity = _Activity("mod_main", "after its reactor stopped", self)
        return STATE.timed(activity, resume, self)

    Reactor._invoke, Reactor.iterate = _invoke, _iterate
    MockBroker.load, MockBroker._step = _load, _step
    MockBroker._module_exited = _module_exited
    ModuleLink.__init__, ModuleLink._thread_main = _link_init, _thread_main
    ModuleLink.start, ModuleLink.resume = _start, _resume


def trace_exits() -> None:
    """Log the caller of ``os._exit`` and of a fatal ``os.kill`` of ourselves."""

    def log_caller(what: str) -> None:
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


def _stray_threads(baseline: set) -> Finding | None:
    """A failure naming the live threads the kit did not start, if any."""
    deadline = time.perf_counter() + THREAD_GRACE
    strays = []
    for t in threading.enumerate():
        if t not in baseline:
            t.join(max(0.0, deadline - time.perf_counter()))  # a module finishing
            if t.is_alive():
                strays.append(t)
    if not strays:
        return None
    names, stacks = [], []
    for t in strays:
        frame, stack = _stack_of(t.ident)
        names.append(f"{t.name!r} (at {_where(frame)})")
        stacks.append(f"Thread {t.name!r} (daemon={t.daemon}):\n{stack}")
    text = f"{len(strays)} thread(s) of the module still running after the probe: "
    tb = _clip("\n".join(stacks))
    return STATE.fail("robust.no-stray-threads", text + ", ".join(names), traceback=tb)


def run_probe(request: dict, baseline: set) -> dict:
    """Run one requested probe; return the answer to send back."""
    from conformance.probes import execute

    STATE.begin(request)
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
    except KeyboardInterrupt:
        # Raised in a scheduler callback (SIGINT itself is ignored here):
        # an interrupt of the whole run, which the parent re-raises.
        return dict(type="interrupted", id=request.get("id"))
    except BaseException as exc:  # noqa: BLE001 - SystemExit at import, say
        traceback.clear_frames(exc.__traceback__)
        clause = "robust.memory" if isinstance(exc, MemoryError) else "robust.no-crash"
        tb = _clip("".join(traceback.format_exception(exc)))
        text = f"{type(exc).__name__} escaped the probe: {exc}"
        escaped.append(STATE.fail(clause, text, traceback=tb))
    # What the hooks saw came first; then what ended the probe; then threads.
    budget = [f for f in findings if f.verdict == FAIL and f.clause in BUDGET_CLAUSES]
    cause = next(iter(STATE.events + escaped + budget), None)
    if cause is None:
        cause = _stray_threads(baseline)
    if cause is not None:
        findings = [cause]
    stats = dict(stats or {})
    stats["isolation"] = dict(
        pid=os.getpid(), callbacks=STATE.callbacks, slowest_callback=STATE.slowest
    )
    findings = [f.to_dict() for f in findings]
    isolation = cause.clause if cause is not None else None
    answer = dict(type="result", id=request.get("id"), findings=findings, stats=stats)
    return dict(answer, isolation=isolation, recycle=isolation is not None)


# -- the process ----------------------------------------------------------------------------


def _set_memory_limit(mb: int) -> None:
    import resource

    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = mb * 2**20 if hard == resource.RLIM_INFINITY else min(mb * 2**20, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


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
        _, module = _load_python_module(path)
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
    parser.add_argument("--preflight", metavar="TARGET")
    parser.add_argument("--preflight-args", default="[]", metavar="JSON")
    opts = parser.parse_args(argv)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for fd in (opts.requests_fd, opts.results_fd):  # not for the module's children
        if fd is not None:
            os.set_inheritable(fd, False)
    channel = _Channel(opts.results_fd)
    if opts.preflight is not None:
        _set_memory_limit(opts.memory_mb)
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
    install_hooks()
    trace_exits()
    _set_memory_limit(opts.memory_mb)
    name = "schedkit-watchdog"
    threading.Thread(target=_watchdog, args=(channel,), name=name, daemon=True).start()
    baseline = set(threading.enumerate())
    channel.send({"type": "ready", "pid": os.getpid()})
    with os.fdopen(opts.requests_fd, "rb") as requests:
        for line in requests:
            request = json.loads(line)
            if request.get("op") != "probe":
                break
            channel.send(run_probe(request, baseline))
    _real_exit(0)  # stray threads must not keep the worker alive


if __name__ == "__main__":
    main()
