"""Virtual time for everything a mock broker hosts.

``time.time()`` and ``time.monotonic()`` are replaced, once per process, by
functions that read the innermost *active* :class:`VirtualClock` and fall
back to the real clock when none is active.  A broker activates its clock
while it runs, so scheduler code (and the wheel's ``Rv1Pool``, which stamps
``time.time()`` into R) sees virtual seconds, while pytest, benchmarks and
``time.perf_counter()`` keep real time.
"""

from __future__ import annotations

import contextlib
import time as _time
from collections.abc import Iterator

#: Virtual wall-clock time at which every broker starts: 2026-01-01T00:00Z.
EPOCH = 1_767_225_600.0
#: Virtual ``time.monotonic()`` at the epoch.
MONOTONIC_BASE = 1_000.0

_real_time = _time.time
_real_monotonic = _time.monotonic
_active: list[VirtualClock] = []


def _virtual_time() -> float:
    return _active[-1].now if _active else _real_time()


def _virtual_monotonic() -> float:
    if _active:
        clock = _active[-1]
        return MONOTONIC_BASE + (clock.now - clock.epoch)
    return _real_monotonic()


def _install_time_functions() -> None:
    if _time.time is not _virtual_time:
        _time.time = _virtual_time
        _time.monotonic = _virtual_monotonic


class VirtualClock:
    """Seconds since the Unix epoch, advanced only by the broker."""

    def __init__(self, epoch: float = EPOCH):
        self.epoch = float(epoch)
        self.now = float(epoch)

    @property
    def elapsed(self) -> float:
        """Virtual seconds since the broker started."""
        return self.now - self.epoch

    def advance_to(self, when: float) -> None:
        if when > self.now:
            self.now = when

    @contextlib.contextmanager
    def active(self) -> Iterator[VirtualClock]:
        """Make ``time.time()``/``time.monotonic()`` follow this clock."""
        _install_time_functions()
        _active.append(self)
        try:
            yield self
        finally:
            _active.pop()
