"""Load a Python scheduler module and run its ``mod_main`` as a broker would.

flux-core 0.88's broker runs a Python module in a process of its own
(``flux module-python-exec``), which calls ``mod_main(h, *args)`` on its
main thread with a handle connected to the broker; the module's callbacks
run on that thread too.  Here ``mod_main`` runs on a greenlet of the
thread that runs the broker, in lock-step with it: exactly one of the two
runs at any moment, so a run is deterministic.  (So what a module changes
in its process, at import or after, stays for the next load in the same
process, where a real broker starts a new one.)  The greenlet exists only
to hold ``mod_main``'s stack while the module sits in ``reactor_run()``;
the broker then dispatches the module's callbacks itself, on its own
greenlet of the same thread, which costs no switch per message.  One
thread for both, as in the module's own process: what ``mod_main`` made
that only its thread may use (an ``sqlite3`` connection,
``threading.local`` data) its callbacks can use.  When the module blocks
in ``future.get()`` the broker's services keep working (virtual time
advances for them) until the response arrives, while the module's own
timers wait, as in a blocked module thread.  What code on that process's
main thread may do that reaches the whole process here
(``signal.signal()``, ``asyncio.get_event_loop()``) is given to
``mod_main`` and the callbacks by :mod:`mock_broker.runtime.module_process`.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import importlib
import importlib.util
import os
import signal
import sys
import syslog
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from greenlet import getcurrent, greenlet

from mock_broker.runtime.client_link import ClientLink, HandleLink
from mock_broker.runtime.fresh_imports import forget_own_imports, restore
from mock_broker.runtime.module_process import (
    ModuleProcess,
    connect_module_code,
    hosting,
    real_getsignal,
    real_signal,
)
from mock_broker.runtime.reactor import Reactor

#: The greenlets of modules parked in ``reactor_run()``.  Held here so
#: that a module its broker never unloaded is not collected while parked
#: (greenlet would raise GreenletExit in it, at whatever moment the
#: collector runs, and a module that catches it would run on there).
_PARKED: set = set()

#: Set when a Ctrl-C came while a module's mod_main ran (see _ctrl_c_marked).
_CTRL_C = {"seen": False}


def _on_sigint(signum, frame):
    _CTRL_C["seen"] = True
    raise KeyboardInterrupt


@contextlib.contextmanager
def _ctrl_c_marked():
    """While ``mod_main`` runs on this thread: mark a Ctrl-C (SIGINT under
    Python's default handler), so that a KeyboardInterrupt the module
    raised itself (a module exit) is told from the user's (which stops the
    host).  Elsewhere (a host that ignores SIGINT, as the conformance
    worker, or another thread) every KeyboardInterrupt is the module's."""
    if (
        threading.current_thread() is not threading.main_thread()
        or real_getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield
        return
    _CTRL_C["seen"] = False
    real_signal(signal.SIGINT, _on_sigint)
    try:
        yield
    finally:
        real_signal(signal.SIGINT, signal.default_int_handler)


class ModuleLoadError(Exception):
    """``flux module load`` would fail: the message names module and cause."""


@dataclass
class ModuleSpec:
    """What to load: a file path or a dotted module, and an optional class."""

    name: str
    entry: Callable[..., Any]
    source: str
    #: The module's own file: where its exceptions are located.
    file: str | None = None
    #: What the load did otherwise than a real broker (see
    #: :func:`_load_python_module`), for the transcript.
    note: str | None = None
    #: What the module's import did to its process (see
    #: :mod:`~mock_broker.runtime.module_process`): the import runs as on
    #: the main thread of the module's own process, and its load goes on
    #: from there.
    process: ModuleProcess | None = None


#: The first import from each file in this process, by path: an import
#: that fails later falls back on it (see :func:`_load_python_module`).
_FIRST_IMPORTS: dict[str, Any] = {}


#: The modules (by :attr:`ModuleSpec.file`, else source) that reached
#: their reactor in this process: a later load of one that fails may have
#: met what an earlier load left in the process (see :func:`rerun_hint`).
_RAN_HERE: set[str] = set()


def ran_here(spec: ModuleSpec) -> None:
    """Record that *spec*'s module reached its reactor in this process."""
    _RAN_HERE.add(spec.file or spec.source)


def rerun_hint(spec: ModuleSpec, error: BaseException | None) -> str:
    """For a load of *spec* that failed with *error*: where that is an
    ``OSError`` (a port in use, a busy device: what a process holds) and a
    load of the same module ran before in this process, what differs from
    flux-core 0.88 (a new process per load); else nothing."""
    if not isinstance(error, OSError) or (spec.file or spec.source) not in _RAN_HERE:
        return ""
    return (
        " (a load of it ran earlier in this process, and what that load left "
        "here stays, a bound port or a thread; flux-core 0.88 starts each load "
        "in a new process)"
    )


def _at_line(exc: SyntaxError) -> str:
    """`` line N`` where the parser stopped, or nothing when it cannot say
    (null bytes in the file: no line)."""
    return f" line {exc.lineno}" if exc.lineno else ""


def _load_python_module(target: str):
    """Import *target* (a ``.py`` path or a dotted name): ``(name, module,
    note)``.

    A file is imported afresh at each load, as flux-core 0.88 does in the
    new process it starts for each, and so are the modules of its own code
    (beside it, or in the package a dotted name names) that an earlier
    load imported (:mod:`~mock_broker.runtime.fresh_imports`).  Here every
    load shares one process,
    so what an import changed in it stays (a metrics registry that refuses
    a second registration, a closed descriptor, an audit hook): an import
    that fails where one from the same file succeeded before in this
    process gives that first module instead, and *note* says so.
    """
    if target.endswith(".py") or os.sep in target:
        path = os.path.abspath(target)
        if not os.path.isfile(path):
            # A directory or a device (/dev/zero, a FIFO) would never read
            # as a module, or never end reading: refused before opening.
            if os.path.isdir(path):
                raise ModuleLoadError(f"{target}: Is a directory")
            if os.path.exists(path):
                raise ModuleLoadError(f"{target}: not a regular file")
            raise ModuleLoadError(f"{target}: No such file or directory")
        stem = os.path.splitext(os.path.basename(path))[0]
        unique = f"_schedkit_module_{stem.replace('-', '_')}_{abs(hash(path))}"
        spec = importlib.util.spec_from_file_location(unique, path)
        if spec is None or spec.loader is None:
            # As flux module load: only a .py file is a Python module.
            raise ModuleLoadError(f"{target}: not a Python module (no .py suffix)")
        module = importlib.util.module_from_spec(spec)
        dropped = forget_own_imports(path)
        try:
            spec.loader.exec_module(module)
        except SyntaxError as exc:
            restore(dropped)
            raise ModuleLoadError(
                f"{stem}: syntax error in {path}{_at_line(exc)}: {exc.msg}"
            ) from exc
        except BaseException as exc:
            restore(dropped)
            if not isinstance(exc, Exception):
                raise  # an exit or a Ctrl-C at import, as before
            first = _FIRST_IMPORTS.get(path)
            if first is None:
                raise ModuleLoadError(
                    f"{stem}: error importing {path}: {_import_error_text(exc)}"
                ) from exc
            note = (
                f"module load {stem}: importing {path} again in this process "
                f"raised {exception_text(exc)}; its first import here is loaded "
                "instead (flux-core 0.88 imports a module in a new process at "
                "each load)"
            )
            return stem, first, note
        _FIRST_IMPORTS.setdefault(path, module)
        sys.modules[unique] = module
        return stem, module, None
    dropped = forget_own_imports(target)
    try:
        module = _import_dotted(target)
    except BaseException:
        restore(dropped)
        raise
    return target.rsplit(".", 1)[-1], module, None


def _import_dotted(target: str):
    """``importlib.import_module(target)``, its failures as
    :class:`ModuleLoadError`."""
    try:
        return importlib.import_module(target)
    except ModuleNotFoundError as exc:
        raise ModuleLoadError(f"{target}: module not found ({exc})") from exc
    except SyntaxError as exc:
        raise ModuleLoadError(
            f"{target}: syntax error{_at_line(exc)}: {exc.msg}"
        ) from exc
    except Exception as exc:
        raise ModuleLoadError(
            f"{target}: error importing: {_import_error_text(exc)}"
        ) from exc


def _import_error_text(exc: BaseException) -> str:
    """What an import raised, in flux-python's terms where it is a name
    the substitute lacks (:func:`~mock_broker.flux_substitute.gaps.missing_name`)."""
    from mock_broker.flux_substitute.gaps import missing_name

    missing = missing_name(exc)
    return exception_text(exc) if missing is None else missing


def resolve(spec: str, name: str | None = None) -> ModuleSpec:
    """Resolve ``PATH.py``, ``package.module`` or either with ``:Class``.

    The module name defaults to the file's stem (``my-sched.py`` loads as
    ``my-sched``), as ``flux module load`` names a Python module.
    """
    target, _, cls_name = spec.partition(":")
    if ":" in spec and not cls_name:
        raise ModuleLoadError(f"{spec}: empty class name after ':'")
    # The import runs as the module's own process would run it: a signal
    # handler it sets, an event loop it makes, a thread it starts are the
    # module's, not the host's (a SIGINT handler set at import took the
    # host's Ctrl-C until 2026-12-07).
    process = ModuleProcess()
    process.thread_daemon = ModuleLink.thread_daemon
    try:
        with hosting(process):
            default_name, module, note = _load_python_module(target)
        entry = _entry(module, cls_name, default_name, target)
    except BaseException:
        process.close()  # no load follows
        raise
    return ModuleSpec(
        name or default_name,
        entry,
        spec,
        getattr(module, "__file__", None),
        note,
        process,
    )


def _entry(module, cls_name: str, default_name: str, target: str):
    """The ``mod_main`` of *module*, or one that runs its class *cls_name*."""
    from flux.brokermod import resolve_entry_point

    if cls_name:
        cls = getattr(module, cls_name, None)
        if not isinstance(cls, type):
            raise ModuleLoadError(f"{default_name}: no class {cls_name!r} in {target}")

        def entry(h, *args):
            cls(h, *args).run()

        return entry
    try:
        return resolve_entry_point(module)
    except ValueError as exc:
        raise ModuleLoadError(f"{default_name}: {exc}") from exc


def where_raised(exc: BaseException, file: str | None) -> str:
    """``FILE:LINE in FUNCTION``, where *exc* was raised.

    The frame is the innermost one in the module's own *file* (the line the
    author wrote, even when the error surfaced in flux-python or a library
    below it); without one, the innermost frame of all; ``""`` if *exc*
    has no traceback.
    """
    frames = list(traceback.walk_tb(exc.__traceback__))
    own = _realpath(file) if file else None
    mine = [(f, n) for f, n in frames if _realpath(f.f_code.co_filename) == own]
    if not (mine or frames):
        return ""
    frame, line = (mine or frames)[-1]
    return f"{frame.f_code.co_filename}:{line} in {frame.f_code.co_name}"


def where_called(file: str | None) -> str:
    """``FILE:LINE in FUNCTION``: the innermost frame of the current stack
    in the module's own *file* (the line of the module that led to this
    call), or ``""`` when none is."""
    own = _realpath(file) if file else None
    frame = sys._getframe(1)
    while frame is not None and own is not None:
        code = frame.f_code
        if _realpath(code.co_filename) == own:
            return f"{code.co_filename}:{frame.f_lineno} in {code.co_name}"
        frame = frame.f_back
    return ""


@functools.lru_cache(maxsize=1024)
def _realpath(path: str) -> str:
    # (cached: a module that never settles is located at each timer firing)
    return os.path.realpath(path)


def exception_text(exc: BaseException, ctrl_c: bool = True) -> str:
    """``Type: message``, or ``Type`` when the message is empty.

    The exception is the module's, and so is its ``__str__``: when that
    raises or returns something odd, the text says so instead of raising
    in the kit.  Only a KeyboardInterrupt goes through (Ctrl-C), unless
    *ctrl_c* is false (where SIGINT is ignored, it is the module's too).
    """
    name = type(exc).__name__
    if not isinstance(name, str):  # a metaclass may make __name__ anything
        name = object.__repr__(type(exc))
    try:
        text = str(exc)
    except KeyboardInterrupt:
        if ctrl_c:
            raise
        return f"{name} (its message could not be read: str() raised KeyboardInterrupt)"
    except BaseException as inner:  # noqa: BLE001 - the module's __str__ failed
        return f"{name} (its message could not be read: str() raised {type(inner).__name__})"
    return f"{name}: {text}" if text else name


def describe_raised(exc: BaseException, file: str | None) -> str:
    """``Type: message at FILE:LINE in FUNCTION`` (see :func:`exception_text`
    and :func:`where_raised`); never raises for a module's odd exception."""
    what = exception_text(exc)
    where = where_raised(exc, file)
    return f"{what} at {where}" if where else what


class ModuleLink(HandleLink):
    """The broker's side of one hosted module: its greenlet, reactor and handle."""

    def __init__(self, broker, spec: ModuleSpec, args: list[str]):
        from flux.core.handle import Flux

        self.broker = broker
        self.spec = spec
        self.name = spec.name
        self.args = list(args)
        self.reactor = Reactor(broker.clock)
        #: What the module's own process would hold (signal handlers, its
        #: asyncio loop) for code on a main thread; see module_process.
        #: Its import began it (each load resolves, so imports, afresh).
        self.process = spec.process if spec.process is not None else ModuleProcess()
        self.attrs = dict(broker.attributes)
        self.config = broker.config
        #: "init" (in mod_main), "reactor" (in reactor_run), "exited"
        self.state = "init"
        self.running = False
        self.exit_error: BaseException | None = None
        self.exit_traceback = ""
        #: An exception the module caught and logged at error level or
        #: worse (flux-python's message handlers log what a callback raised,
        #: then stop the reactor with a bare error): where, and its traceback.
        self.logged_error = ""
        self.logged_traceback = ""
        #: True when the exception that ends mod_main escaped a callback.
        self.callback_escaped = False
        self.services: set[str] = set()
        self.subscriptions: set[str] = set()
        self.debug_bits = 0
        self.process.thread_daemon = self.thread_daemon
        self.process.connect = functools.partial(ClientLink, self)
        Flux.connector = connect_module_code
        #: The greenlet that runs ``mod_main`` (None until :meth:`start`).
        self.greenlet: greenlet | None = None
        self.handle = Flux(link=self)

    #: Whether the threads the module starts are daemons unless it says.
    #: flux-core 0.88 calls ``mod_main`` on the main thread of the module's
    #: own process (not a daemon), whose exit then waits for them; here a
    #: thread the module leaves must not keep the kit's process from
    #: exiting, so they are daemons, unless the host never waits for its
    #: threads at exit (the conformance worker ends with ``os._exit``) and
    #: sets False to judge them as a real broker would.
    thread_daemon = True

    # -- lock-step handling ------------------------------------------------

    def start(self) -> None:
        """Run ``mod_main`` until it enters its reactor or exits."""
        self.greenlet = greenlet(self._main)
        self._switch_in()

    def _main(self) -> None:
        try:
            with hosting(self.process):
                self.spec.entry(self.handle, *self.args)
        except KeyboardInterrupt as exc:
            if _CTRL_C["seen"]:
                # The user's Ctrl-C stops the host, as it would with
                # mod_main on a thread of its own.
                self._exited()
                raise
            self.exit_error = exc
            self.exit_traceback = traceback.format_exc()
        except BaseException as exc:  # noqa: BLE001 - reported as module exit
            self.exit_error = exc
            self.exit_traceback = traceback.format_exc()
        self._exited()

    def _exited(self) -> None:
        self.process.close()
        self.state = "exited"

    def _switch_in(self) -> None:
        """Run the module's greenlet until it parks or ends; the caller's
        greenlet gets control back (and what mod_main raised past
        :meth:`_main`: Ctrl-C)."""
        g = self.greenlet
        g.parent = getcurrent()
        _PARKED.discard(g)
        with _ctrl_c_marked():
            g.switch()

    def iterate(self) -> None:
        """One iteration of the module's reactor, its callbacks run as on
        the main thread of the module's process (see module_process)."""
        with hosting(self.process):
            self.reactor.iterate()

    def run_reactor(self) -> int:
        """``reactor_run()``: park mod_main until the reactor is stopped."""
        g = self.greenlet
        if g is None or getcurrent() is not g:
            raise OSError(errno.EDEADLK, "reactor_run() called from a callback")
        self.reactor.restart()
        self.logged_error = self.logged_traceback = ""
        self.state = "reactor"
        _PARKED.add(g)
        g.parent.switch()
        self.state = "init"
        if self.reactor.exception is not None:
            exc = self.reactor.exception
            self.reactor.exception = None
            self.callback_escaped = True
            raise exc
        return -1 if self.reactor.stop_reason == "error" else 0

    def resume(self) -> None:
        """Return from ``reactor_run()`` and run mod_main until it parks again."""
        if self.state != "reactor":
            return
        self._switch_in()

    # -- what the substitute handle calls -----------------------------------

    def set_running(self) -> None:
        self.running = True

    def debug_test(self, flag: int, clear: bool) -> bool:
        hit = bool(self.debug_bits & flag)
        if clear:
            self.debug_bits &= ~flag
        return hit

    def log(self, level: int, text: str) -> None:
        if level <= syslog.LOG_ERR:
            exc = sys.exc_info()[1]
            if isinstance(exc, Exception):
                self.logged_error = describe_raised(exc, self.spec.file)
                self.logged_traceback = "".join(traceback.format_exception(exc))
        self.broker.module_log(self, level, text)

    def exit_detail(self) -> str:
        """Why the module exited, and where the scheduler raised.

        Either an exception ended mod_main (raised by mod_main itself or
        escaped from a callback): its type, text and the scheduler's file
        and line; or a callback raised, and flux-python's message handler
        caught it, logged it and stopped the reactor with a bare error:
        that error, then the logged exception with its file and line.
        """
        exc = self.exit_error
        if exc is None:
            return "ok"
        if self.logged_error and not self.callback_escaped:
            # (an exception without a message, e.g. flux-python's bare
            # error stopping the reactor, is named by its type alone)
            what = exception_text(exc).removeprefix(f"{type(exc).__name__}: ")
            return f"{what} after {self.logged_error}"
        return describe_raised(exc, self.spec.file)

    def exit_trace(self) -> str:
        """The traceback that shows where the scheduler went wrong."""
        if self.logged_error and not self.callback_escaped:
            return self.logged_traceback
        return self.exit_traceback
