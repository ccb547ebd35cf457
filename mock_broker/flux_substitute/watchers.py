"""Stands in for ``flux.core.watchers``: timer, prepare, check, idle and
signal watchers.

Watchers attach to the hosting module's virtual-time
:class:`~mock_broker.runtime.reactor.Reactor`.  Callbacks receive
``(flux_handle, watcher, revents, args)`` as with the real bindings.
"""

from __future__ import annotations

import errno
import signal


class Watcher:
    """Base class: start/stop and the context-manager protocol."""

    _kind = ""

    def __init__(self, flux_handle, handle=None):
        self.flux_handle = flux_handle
        self.handle = self
        self._reactor = flux_handle._reactor
        self._order = self._reactor.next_seq()
        self._active = False

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, type_arg, value, _):
        self.stop()

    def start(self):
        self._active = True
        self._reactor.set_active(self._kind, self, True)
        return self

    def stop(self):
        self._active = False
        self._reactor.set_active(self._kind, self, False)
        return self

    def ref(self):
        """Undo :meth:`unref`; changes nothing here (see there)."""
        return self

    def unref(self):
        """Let the watcher not keep ``reactor_run()`` from returning.

        In flux-core that matters only to a reactor that would otherwise
        run out of referenced watchers.  A broker module's never does: its
        message dispatcher's handle watcher stays referenced while the
        module is loaded, so ``reactor_run()`` returns only when stopped,
        and this reactor models exactly that.  So an unreferenced watcher
        fires as any other, and the broker's test of a settled run judges
        its timer, like any other, by what its firing sends."""
        return self

    def destroy(self):
        self.stop()

    def _fire(self):
        if self._active:
            self.callback(self.flux_handle, self, 0, self.args)


class TimerWatcher(Watcher):
    """One-shot or repeating timer on the virtual clock."""

    def __init__(self, flux_handle, after, callback, repeat=0, args=None):
        self.after = float(after)
        self.repeat = float(repeat)
        self.callback = callback
        self.args = args
        self._timer_token = None
        super().__init__(flux_handle)

    def start(self):
        if not self._active:
            self._active = True
            self._reactor.arm_timer(self, self._reactor.clock.now + self.after)
        return self

    def stop(self):
        self._active = False
        self._reactor.disarm_timer(self)
        return self

    def reset(self, after=None, repeat=None):
        """Set new values and re-arm from now, even if already running."""
        if after is not None:
            self.after = float(after)
        if repeat is not None:
            self.repeat = float(repeat)
        self.stop()
        self.start()

    def _fire_timer(self):
        self._timer_token = None
        if self.repeat > 0:
            self._reactor.arm_timer(self, self._reactor.clock.now + self.repeat)
        else:
            self._active = False
        self.callback(self.flux_handle, self, 0, self.args)


class PrepareWatcher(Watcher):
    """Fires at the start of every reactor iteration while active."""

    _kind = "prepare"

    def __init__(self, flux_handle, callback, args=None):
        self.callback = callback
        self.args = args
        super().__init__(flux_handle)


class CheckWatcher(Watcher):
    """Fires at the end of every reactor iteration while active."""

    _kind = "check"

    def __init__(self, flux_handle, callback, args=None):
        self.callback = callback
        self.args = args
        super().__init__(flux_handle)


class IdleWatcher(Watcher):
    """While active, keeps the virtual clock from advancing."""

    _kind = "idle"

    def __init__(self, flux_handle, callback=None, args=None):
        self.callback = callback
        self.args = args
        super().__init__(flux_handle)


class SignalWatcher(Watcher):
    """A watcher for signal *signal_int* that never fires.

    The mock broker sends a hosted module no signals (nothing outside the
    kit can reach a module that runs in the kit's process), so this
    watcher only takes the calls of flux-python's: it starts, stops and
    is destroyed as the real one is, and its callback,
    ``callback(flux_handle, watcher, signum, args)``, is never called.
    It never keeps the reactor busy.
    """

    def __init__(self, flux_handle, signal_int, callback, args=None):
        self.signal_int = signal_int
        self.callback = callback
        self.args = args
        super().__init__(flux_handle)
        # As flux-python's: the number is checked once the watcher exists.
        if signal_int < 1 or signal_int >= signal.NSIG:
            raise OSError(errno.EINVAL, "invalid signal number")

    def start(self):
        self._active = True  # with nothing to deliver, the reactor never sees it
        return self

    def stop(self):
        self._active = False
        return self
