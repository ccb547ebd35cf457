"""Stands in for ``flux.future``: futures fulfilled by the mock broker.

A future holds the responses that arrived for it, oldest first.  ``get()``
returns the oldest (blocking the module, not the broker, until one
arrives), ``reset()`` drops it, and ``then()`` arranges for a callback from
the module's reactor each time a response is ready, as libflux does.

The rules flux-python's ``Future`` enforces hold here too: ``then(None)``
raises :class:`ValueError`; ``then()`` while a continuation is still
pending (set and not yet run, or re-armed by ``reset()`` inside it) raises
:class:`OSError` ``EEXIST``; after ``stop()`` the continuation is never
called again, even if ``then()`` sets a new one; and ``FutureExt`` carries
its results as JSON text, so ``get()`` returns what ``json.loads`` makes of
``json.dumps(result)``.
"""

from __future__ import annotations

import errno
import json
import os
from collections import deque


class Future:
    """A result the module is waiting for."""

    def __init__(self, flux_handle=None):
        self._flux_handle = flux_handle
        self._results: deque = deque()
        self._then = None
        self._then_queued = False
        # flux-python's _THEN_HANDLES count: 1 when then() is called, one
        # less each time the continuation runs, one more on each reset()
        self._then_pending = 0
        self._stopped = False

    # -- producer side (the substitute handle) ---------------------------

    def fulfill(self, result=None) -> None:
        """Make *result* available (a payload, or a :class:`FutureError`)."""
        had_result = bool(self._results)
        self._results.append(result)
        if self._then is not None and not had_result:
            self._schedule_then()

    def fulfill_error(self, errnum=errno.ENOENT, errstr=None) -> None:
        self.fulfill(FutureError(errnum, errstr))

    def _schedule_then(self) -> None:
        if self._then_queued or self._flux_handle is None:
            return
        self._then_queued = True
        self._flux_handle._reactor.call_soon(self._run_then)

    def _run_then(self) -> None:
        self._then_queued = False
        if self._then is None or not self._results:
            return
        callback, args, kwargs = self._then
        try:
            if not self._stopped:
                callback(self, *args, **kwargs)
        finally:
            if self._then_pending > 0:
                self._then_pending -= 1

    # -- consumer side ----------------------------------------------------

    def get_flux(self):
        return self._flux_handle

    def set_flux(self, flux_handle):
        self._flux_handle = flux_handle

    def then(self, callback, *args, timeout=-1.0, **kwargs):
        """Call ``callback(future, *args, **kwargs)`` when a result is ready.

        Raises :class:`OSError` ``EEXIST`` while a continuation is pending
        and :class:`ValueError` for a None callback, as flux-python does.
        """
        if self._then_pending > 0:
            raise OSError(errno.EEXIST, "then callback already exists for this future")
        if callback is None:
            raise ValueError("Callback cannot be None")
        self._then = (callback, args, kwargs)
        self._then_pending = 1
        if self._results:
            self._schedule_then()
        return self

    def is_ready(self) -> bool:
        return bool(self._results)

    def wait_for(self, timeout=-1.0):
        if not self._results:
            self._flux_handle._wait_until(self.is_ready, self)
        return self

    def reset(self) -> None:
        """Drop the current result; a continuation runs again on the next."""
        if self._results:
            self._results.popleft()
        if self._then_pending > 0:
            self._then_pending += 1
        if self._results and self._then is not None:
            self._schedule_then()

    def _result(self):
        self.wait_for()
        result = self._results[0]
        if isinstance(result, FutureError):
            raise OSError(result.errnum, result.errstr)
        return result

    def get(self):
        """Return the current result, blocking the module until there is one."""
        return self._result()

    def error_string(self) -> str | None:
        """The error the future was fulfilled with (its text, or the
        errno's description, as libflux gives it); None if it succeeded
        or is not yet fulfilled."""
        if self._results and isinstance(self._results[0], FutureError):
            error = self._results[0]
            return error.errstr or os.strerror(error.errnum)
        return None

    def stop(self) -> None:
        """Never call the continuation again (then() cannot undo this)."""
        self._stopped = True

    def incref(self) -> None:
        """Reference counting is Python's job here."""


class _JSONResult:
    """A FutureExt result, kept as the JSON text flux-python stores."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text


class FutureError:
    """An error result: errno and a human-readable message."""

    __slots__ = ("errnum", "errstr")

    def __init__(self, errnum: int, errstr: str | None = None):
        self.errnum = errnum
        self.errstr = errstr or os.strerror(errnum)


class FutureExt(Future):
    """A future that its owner fulfills itself (``fulfill``/``fulfill_error``).

    ``init_cb(self, *args)`` runs once, when the future is first waited on
    or given a continuation, as with ``flux_future_create``.
    """

    def __init__(self, init_cb, *args, flux_handle=None, **kwargs):
        super().__init__(flux_handle)
        self._init = (init_cb, args, kwargs)

    def fulfill(self, result=None) -> None:
        """Fulfill with *result*, which must survive ``json.dumps()``.

        As in flux-python the result is stored as JSON text: a value JSON
        cannot hold raises :class:`TypeError` here, and ``get()`` returns
        the decoded copy (tuples come back as lists, int keys as strings).
        """
        super().fulfill(_JSONResult(json.dumps(result)))

    def get(self):
        """Return the decoded result, blocking the module until there is one."""
        result = self._result()
        return json.loads(result.text) if isinstance(result, _JSONResult) else result

    def _initialize(self) -> None:
        if self._init is not None:
            init_cb, args, kwargs = self._init
            self._init = None
            init_cb(self, *args, **kwargs)

    def then(self, callback, *args, timeout=-1.0, **kwargs):
        self._initialize()
        return super().then(callback, *args, timeout=timeout, **kwargs)

    def wait_for(self, timeout=-1.0):
        self._initialize()
        return super().wait_for(timeout)


class WaitAllFuture(Future):
    """Fulfilled once every child future is.

    ``children`` is the list of futures, as in flux-python (whose
    ``JobKVSLookupFuture`` reads it); a pushed child's *name* names it in
    libflux's composite only, so it is not kept.
    """

    def __init__(self, children=None):
        super().__init__()
        self.children = [] if children is None else children
        for child in self.children:
            if self._flux_handle is None:
                self._flux_handle = child.get_flux()

    def push(self, child, name=None):
        if self._flux_handle is None:
            self._flux_handle = child.get_flux()
        self.children.append(child)

    def wait_for(self, timeout=-1.0):
        for child in self.children:
            child.wait_for(timeout)
        if not self._results:
            self.fulfill(None)
        return self
