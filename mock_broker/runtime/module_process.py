"""What the main thread of a module's own process gives it.

flux-core 0.88 calls ``mod_main`` on the main thread of a process of the
module's own, and its callbacks run there too.  The mock broker runs
``mod_main`` on a greenlet and the callbacks on the broker's greenlet,
both on the thread that runs the broker (see
:mod:`mock_broker.runtime.module_host`): what a module made on that
thread (an ``sqlite3`` connection, ``threading.local`` data) is there for
its callbacks, as in its own process.  Two things a main thread may do
would still reach the kit's own process, so module code gets them from
its :class:`ModuleProcess` instead:

- ``signal.signal()`` records the handler in the module's
  :class:`ModuleProcess`, installs nothing (the mock broker sends modules
  no signals) and returns the one it replaces; ``signal.getsignal()``
  answers from that record.
- ``asyncio.get_event_loop()``: an event-loop policy gives each module one
  loop of its own, as its main thread would get: made at the first call,
  shared by ``mod_main`` and the callbacks, closed when ``mod_main``
  returns.

A thread module code starts is a daemon unless the module says otherwise
(or :attr:`ModuleProcess.thread_daemon` is False, as the conformance kit
sets to judge stray threads as flux-core would): in the kit's process a
thread the module leaves behind must not keep a command from exiting.

Module code here is the import of the module's file (a signal handler
set at import is the module's, not the host's), ``mod_main``'s greenlet
and the broker's while it runs the module's callbacks (:func:`hosting`);
which module a piece of code stands for is a context variable, so each
greenlet has its own.
Everywhere else (the kit, the threads a module starts) all of this
behaves as Python's own.
"""

from __future__ import annotations

import asyncio
import contextvars
import errno
import signal
import threading
from typing import Any

#: Python's own, for the host (module code's calls go through _signal).
real_signal = signal.signal
real_getsignal = signal.getsignal
_real_thread_init = threading.Thread.__init__
_process: contextvars.ContextVar = contextvars.ContextVar(
    "schedkit_module_process", default=None
)


def current() -> ModuleProcess | None:
    """The module whose main thread the calling code stands for now."""
    return _process.get()


class _Hosting:
    __slots__ = ("_process", "_token")

    def __init__(self, process: ModuleProcess):
        self._process = process

    def __enter__(self) -> ModuleProcess:
        self._token = _process.set(self._process)
        return self._process

    def __exit__(self, *exc) -> None:
        _process.reset(self._token)


def hosting(process: ModuleProcess) -> _Hosting:
    """Context manager: the calling code runs *process*'s module code."""
    return _Hosting(process)


class ModuleProcess:
    """The per-process state a hosted module's main thread holds: its
    signal handlers and its asyncio event loop."""

    #: Whether a thread module code starts without saying is a daemon.
    thread_daemon = True
    #: Makes the link of a new connection of this module (``flux.Flux()``
    #: in its code); set by the module's host.
    connect: Any = None

    def __init__(self) -> None:
        _install()
        #: Handlers the module set with ``signal.signal()``, by number.
        self.signal_handlers: dict[int, Any] = {}
        self.loop: asyncio.AbstractEventLoop | None = None
        # Set by set_event_loop(): a main thread then makes no loop itself.
        self.loop_set = False
        self._loops_made: list[asyncio.AbstractEventLoop] = []

    def make_loop(self, policy: asyncio.AbstractEventLoopPolicy):
        """Make the module's loop with *policy* (closed by :meth:`close`)."""
        self.loop = policy.new_event_loop()
        self._loops_made.append(self.loop)
        return self.loop

    def close(self) -> None:
        """The process ends: close the loops made for it (their selector
        and self-pipe would stay open in the kit's process)."""
        for loop in self._loops_made:
            if not loop.is_running() and not loop.is_closed():
                loop.close()
        self._loops_made.clear()


def _signal(signalnum, handler):
    process = current()
    if process is None:
        return real_signal(signalnum, handler)
    if signalnum not in signal.valid_signals():
        raise ValueError("signal number out of range")
    if signalnum in (signal.SIGKILL, signal.SIGSTOP):
        raise OSError(errno.EINVAL, "Invalid argument")
    if not callable(handler) and handler not in (signal.SIG_DFL, signal.SIG_IGN):
        raise TypeError(
            "signal handler must be signal.SIG_IGN, signal.SIG_DFL, "
            "or a callable object"
        )
    previous = _getsignal(signalnum)
    process.signal_handlers[int(signalnum)] = handler
    return previous


def connect_module_code() -> Any:
    """The link of a new connection for ``flux.Flux()`` called by module
    code; None elsewhere (the substitute then refuses: no broker)."""
    process = current()
    if process is None or process.connect is None:
        return None
    return process.connect()


def _thread_init(self, *args, **kwargs):
    if kwargs.get("daemon") is None:
        process = current()
        if process is not None:
            kwargs["daemon"] = process.thread_daemon
    _real_thread_init(self, *args, **kwargs)


def _getsignal(signalnum):
    process = current()
    if process is not None and signalnum in process.signal_handlers:
        return process.signal_handlers[signalnum]
    return real_getsignal(signalnum)


class _ModuleLoopPolicy(asyncio.DefaultEventLoopPolicy):
    """Python's default policy, but module code gets its module's loop,
    with a main thread's rules (one made if none was ever set)."""

    def get_event_loop(self):
        process = current()
        if process is None:
            return super().get_event_loop()
        if process.loop is None and not process.loop_set:
            process.make_loop(self)
        if process.loop is None:
            raise RuntimeError(
                "There is no current event loop in thread "
                f"{threading.current_thread().name!r}."
            )
        return process.loop

    def set_event_loop(self, loop):
        process = current()
        if process is None:
            return super().set_event_loop(loop)
        if loop is not None and not isinstance(loop, asyncio.AbstractEventLoop):
            raise TypeError(
                "loop must be an instance of AbstractEventLoop or None, "
                f"not '{type(loop).__name__}'"
            )
        process.loop_set = True
        process.loop = loop
        return None


_installed = False


def _install() -> None:
    """Route ``signal.signal``/``getsignal``, the event-loop policy and the
    daemon default of new threads through this module, once, when the first module is hosted (as the
    clock replaces ``time.time``); what a module replaces later stays, as
    in its process.  Only Python's default policy is replaced: under a
    policy someone else set, module code gets that policy's rules."""
    global _installed
    if _installed:
        return
    _installed = True
    signal.signal, signal.getsignal = _signal, _getsignal
    threading.Thread.__init__ = _thread_init
    if type(asyncio.get_event_loop_policy()) is asyncio.DefaultEventLoopPolicy:
        asyncio.set_event_loop_policy(_ModuleLoopPolicy())
