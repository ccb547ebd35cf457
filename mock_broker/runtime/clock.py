"""Virtual time for everything a mock broker hosts.

The wall and monotonic clocks a module can read are replaced, once per
process (when this module is imported), by functions that read the innermost *active* :class:`VirtualClock`
and fall back to the real clock when none is active: ``time.time()``,
``time.monotonic()``, their ``_ns`` forms, ``time.clock_gettime()`` and
``time.clock_gettime_ns()`` of ``CLOCK_REALTIME`` and ``CLOCK_MONOTONIC``,
and ``datetime.datetime.now()``, ``utcnow()``, ``today()`` and
``datetime.date.today()`` (the module's ``datetime`` and ``date`` become
subclasses that still take every real instance in ``isinstance``).  A broker
activates its clock while it runs, so scheduler code (and the wheel's
``Rv1Pool``, which stamps ``time.time()`` into R) sees virtual seconds
however it reads the time, while pytest, benchmarks and
``time.perf_counter()`` keep real time.
"""

from __future__ import annotations

import contextlib
import datetime as _datetime
import time as _time
from collections.abc import Iterator

#: Virtual wall-clock time at which every broker starts: 2026-01-01T00:00Z.
EPOCH = 1_767_225_600.0
#: Virtual ``time.monotonic()`` at the epoch.
MONOTONIC_BASE = 1_000.0

_real_time = _time.time
_real_monotonic = _time.monotonic
_real_time_ns = _time.time_ns
_real_monotonic_ns = _time.monotonic_ns
_real_clock_gettime = _time.clock_gettime
_real_clock_gettime_ns = _time.clock_gettime_ns
_real_datetime = _datetime.datetime
_real_date = _datetime.date
_active: list[VirtualClock] = []


def _virtual_time() -> float:
    return _active[-1].now if _active else _real_time()


def _virtual_monotonic() -> float:
    if _active:
        clock = _active[-1]
        return MONOTONIC_BASE + (clock.now - clock.epoch)
    return _real_monotonic()


def _virtual_time_ns() -> int:
    return int(_active[-1].now * 1e9) if _active else _real_time_ns()


def _virtual_monotonic_ns() -> int:
    return int(_virtual_monotonic() * 1e9) if _active else _real_monotonic_ns()


def _virtual_clock_gettime(clock_id: int) -> float:
    if _active and clock_id == _time.CLOCK_REALTIME:
        return _virtual_time()
    if _active and clock_id == _time.CLOCK_MONOTONIC:
        return _virtual_monotonic()
    return _real_clock_gettime(clock_id)


def _virtual_clock_gettime_ns(clock_id: int) -> int:
    if _active and clock_id in (_time.CLOCK_REALTIME, _time.CLOCK_MONOTONIC):
        return int(_virtual_clock_gettime(clock_id) * 1e9)
    return _real_clock_gettime_ns(clock_id)


class _TakesRealInstances(type):
    """``isinstance(x, datetime.datetime)`` stays true for the real
    instances made before the swap, or by C code."""

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, cls.__mro__[1])

    def __subclasscheck__(cls, sub) -> bool:
        return issubclass(sub, cls.__mro__[1])


class _VirtualDatetime(_real_datetime, metaclass=_TakesRealInstances):
    @classmethod
    def now(cls, tz=None):
        if not _active:
            return _real_datetime.now(tz)
        return _real_datetime.fromtimestamp(_active[-1].now, tz)

    @classmethod
    def utcnow(cls):
        if not _active:
            return _real_datetime.utcnow()
        return _real_datetime.fromtimestamp(_active[-1].now, _datetime.UTC).replace(
            tzinfo=None
        )

    @classmethod
    def today(cls):
        return cls.now()


class _VirtualDate(_real_date, metaclass=_TakesRealInstances):
    @classmethod
    def today(cls):
        if not _active:
            return _real_date.today()
        return _real_date.fromtimestamp(_active[-1].now)


# Printed and pickled as the classes they stand for.
for _cls, _name in ((_VirtualDatetime, "datetime"), (_VirtualDate, "date")):
    _cls.__module__, _cls.__name__, _cls.__qualname__ = "datetime", _name, _name


def _install_time_functions() -> None:
    if _time.time is not _virtual_time:
        _time.time = _virtual_time
        _time.monotonic = _virtual_monotonic
        _time.time_ns = _virtual_time_ns
        _time.monotonic_ns = _virtual_monotonic_ns
        _time.clock_gettime = _virtual_clock_gettime
        _time.clock_gettime_ns = _virtual_clock_gettime_ns
        _datetime.datetime = _VirtualDatetime
        _datetime.date = _VirtualDate


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
        """Make the clocks a module reads follow this clock."""
        _install_time_functions()
        _active.append(self)
        try:
            yield self
        finally:
            _active.pop()


# Now, before any scheduler module is imported: one that binds
# ``from datetime import datetime`` at import takes the class it finds.
_install_time_functions()
