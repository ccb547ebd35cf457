"""The module-side event loop of the mock broker, on a virtual clock.

One :class:`Reactor` serves one hosted module, the way each broker module
has its own reactor in a real broker.  It never sleeps: the broker world
(:mod:`mock_broker.world`) advances the virtual clock when every reactor
and the job-manager are idle, straight to the next timer or scripted event.

One iteration runs, in this order: prepare watchers, due timers (earliest
first, ties in arming order), queued messages (arrival order), future
continuations, idle watchers with callbacks, check watchers.  The order is
libev's (prepare, poll, timers, I/O, idle, check) flattened to one queue per
kind, and every tie is broken by a sequence number, so a run is
reproducible to the byte.  As in libev, prepare and check watchers are not
work: prepare watchers run once before the loop would block (right after
the iteration's callbacks when nothing else is ready) and check watchers
once per wakeup (last in the iteration it starts), so with nothing else
ready the loop blocks (the clock may move) however long they stay active.  Only ready work keeps it going
round: an active idle watcher, a due timer, a message or a continuation.
"""

from __future__ import annotations

import heapq
import inspect
import itertools
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol


class Clock(Protocol):
    """What the reactor needs from the virtual clock."""

    @property
    def now(self) -> float: ...


class CallbackError(Exception):
    """An exception escaped a module callback; the reactor stopped with it."""


class Reactor:
    """Virtual-time reactor for one hosted module."""

    def __init__(self, clock: Clock):
        self.clock = clock
        self._seq = itertools.count()
        self._timers: list[tuple[float, int, Any]] = []
        self._prepare: dict[int, Any] = {}
        self._check: dict[int, Any] = {}
        self._idle: dict[int, Any] = {}
        self._inbox: deque = deque()
        self._calls: deque = deque()
        self._msg_watchers: list = []
        #: Set by reactor_stop(): "ok", "error", or None while running.
        self.stop_reason: str | None = None
        #: The exception that escaped a callback, if any.
        self.exception: BaseException | None = None
        #: Number of callbacks dispatched and of iterations run.
        self.dispatched = 0
        # True once the prepare watchers have run since the loop last did
        # work: it may block (the clock may move) without running them.
        self._prepared = False
        self.iterations = 0
        self.on_message: Callable[[Any], None] | None = None

    # -- registration -------------------------------------------------

    def next_seq(self) -> int:
        return next(self._seq)

    def arm_timer(self, watcher, when: float) -> None:
        token = next(self._seq)
        watcher._timer_token = token
        heapq.heappush(self._timers, (when, token, watcher))

    def disarm_timer(self, watcher) -> None:
        watcher._timer_token = None

    def set_active(self, kind: str, watcher, active: bool) -> None:
        table = {"prepare": self._prepare, "check": self._check, "idle": self._idle}[
            kind
        ]
        if active:
            if watcher._order not in table:
                table[watcher._order] = watcher
        else:
            table.pop(watcher._order, None)

    def add_msg_watcher(self, watcher) -> None:
        if watcher not in self._msg_watchers:
            self._msg_watchers.append(watcher)

    def remove_msg_watcher(self, watcher) -> None:
        if watcher in self._msg_watchers:
            self._msg_watchers.remove(watcher)

    def match_msg_watcher(self, msg):
        """Return the active message watcher for *msg*, or None."""
        for watcher in self._msg_watchers:
            if watcher.matches(msg):
                return watcher
        return None

    def post_message(self, msg) -> None:
        self._inbox.append(msg)

    def call_soon(self, fn: Callable[[], None]) -> None:
        self._calls.append(fn)

    # -- state --------------------------------------------------------

    def _drop_stale_timers(self) -> None:
        timers = self._timers
        while timers and timers[0][2]._timer_token != timers[0][1]:
            heapq.heappop(timers)

    def next_timer_time(self) -> float | None:
        """Virtual time of the earliest armed timer, or None."""
        self._drop_stale_timers()
        return self._timers[0][0] if self._timers else None

    def last_timer_time(self) -> float | None:
        """Virtual time of the latest armed timer, or None: once the clock
        has passed it, every timer armed now has fired (or was stopped)."""
        armed = [when for when, token, w in self._timers if w._timer_token == token]
        return max(armed) if armed else None

    def ready(self) -> bool:
        """True if work is ready now (an active idle watcher, a message, a
        continuation, a due timer): the loop would go round, not block."""
        if self._idle or self._inbox or self._calls:
            return True
        when = self.next_timer_time()
        return when is not None and when <= self.clock.now

    def busy(self) -> bool:
        """True if an iteration would do work without the clock moving."""
        return self.ready() or bool(self._prepare) and not self._prepared

    def busy_with(self) -> str:
        """What keeps this reactor busy without the clock moving, for the
        evidence of a livelock: its kinds of ready work, and where a pass
        suspended in a generator (one an idle or check watcher's owner
        holds) stands."""
        kinds = [
            kind
            for kind, ready in (
                ("idle watchers", self._idle),
                ("messages", self._inbox),
                ("calls", self._calls),
            )
            if ready
        ]
        when = self.next_timer_time()
        if when is not None and when <= self.clock.now:
            kinds.append("due timers")
        text = ", ".join(kinds) or "nothing"
        try:
            for watcher in [*self._idle.values(), *self._check.values()]:
                owner = getattr(getattr(watcher, "callback", None), "__self__", None)
                for value in list(vars(owner).values()) if owner is not None else ():
                    if inspect.isgenerator(value) and value.gi_frame is not None:
                        frame = value.gi_frame
                        code = frame.f_code
                        return (
                            f"{text}; a pass suspended at {code.co_filename}:"
                            f"{frame.f_lineno} in {code.co_name}"
                        )
        except Exception:  # noqa: BLE001 - an owner without plain attributes
            pass
        return text

    # -- one iteration --------------------------------------------------

    def iterate(self) -> bool:
        """Run one loop iteration; return False once the reactor is stopped.

        The prepare watchers run first unless they ran since the loop's
        last work; with nothing ready then, the loop blocks there and the
        iteration ends (the check watchers run when it wakes).
        """
        if self.stop_reason is not None:
            return False
        self.iterations += 1
        if not self._prepared and not self._run_prepare():
            return False
        if not self.ready():
            return True
        self._prepared = False
        now = self.clock.now
        while True:
            self._drop_stale_timers()
            if not self._timers or self._timers[0][0] > now:
                break
            _, _, watcher = heapq.heappop(self._timers)
            if not self._invoke(watcher._fire_timer):
                return False
        for _ in range(len(self._inbox)):
            msg = self._inbox.popleft()
            if not self._invoke(lambda m=msg: self.on_message(m)):
                return False
        for _ in range(len(self._calls)):
            if not self._invoke(self._calls.popleft()):
                return False
        for watcher in list(self._idle.values()):
            if watcher.callback is not None and not self._invoke(watcher._fire):
                return False
        for watcher in list(self._check.values()):
            if not self._invoke(watcher._fire):
                return False
        if self.ready():
            return True  # the next iteration starts with the prepare watchers
        # About to block: libev runs the prepare watchers now, in this same
        # iteration, so waiting for the next event never counts as one.
        return self._run_prepare()

    def _run_prepare(self) -> bool:
        for watcher in list(self._prepare.values()):
            if not self._invoke(watcher._fire):
                return False
        self._prepared = True
        return self.stop_reason is None

    def _invoke(self, fn: Callable[[], None]) -> bool:
        self.dispatched += 1
        try:
            fn()
        except KeyboardInterrupt:
            # Ctrl-C is the user's, not the module's: it ends the run (the
            # command reports an interrupt), never the module as a crash.
            raise
        except BaseException as exc:  # noqa: BLE001 - reported to reactor_run
            self.exception = exc
            self.stop_reason = "error"
            return False
        return self.stop_reason is None

    def stop(self, error: bool = False) -> None:
        if self.stop_reason is None:
            self.stop_reason = "error" if error else "ok"

    def restart(self) -> None:
        """Prepare for another reactor_run() after a stop."""
        self.stop_reason = None
        self.exception = None
