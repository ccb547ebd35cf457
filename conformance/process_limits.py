"""The resource limits of a conformance worker's process.

The kit caps what a worker may use (:func:`cap_address_space`,
:func:`cap_file_size`) and watches the limits a module may change in its
process (:class:`WatchedLimits`): under flux-core 0.88 a Python module runs
in a process of its own, so those limits are the module's to change, and
each change goes to the worker's log, which the evidence of a death quotes
(a SIGKILL at a CPU limit the module set, say).
"""

from __future__ import annotations

import resource
import signal

#: Limits a module may change, each watched by :class:`WatchedLimits`.
WATCHED_LIMITS = (
    "RLIMIT_CPU",
    "RLIMIT_AS",
    "RLIMIT_DATA",
    "RLIMIT_FSIZE",
    "RLIMIT_NOFILE",
    "RLIMIT_NPROC",
    "RLIMIT_STACK",
)


class WatchedLimits:
    """The :data:`WATCHED_LIMITS` as the kit left them, and what changed
    since (:meth:`changes`)."""

    def __init__(self) -> None:
        # Bound now: a module that replaces resource.getrlimit does not
        # hide its changes.
        self._get, self._unlimited = resource.getrlimit, resource.RLIM_INFINITY
        self._ids = {
            n: getattr(resource, n) for n in WATCHED_LIMITS if hasattr(resource, n)
        }
        self.known = {name: self._get(rid) for name, rid in self._ids.items()}

    def changes(self) -> list[str]:
        """A log line for each limit changed since the last look."""
        out = []
        for name, rid in self._ids.items():
            now = self._get(rid)
            if now != self.known[name]:
                out.append(
                    f"schedkit worker: the module changed {name} (soft, hard) "
                    f"from {self._show(self.known[name])} to {self._show(now)}: "
                    "under flux-core 0.88, its own process's limit\n"
                )
                self.known[name] = now
        return out

    def _show(self, pair: tuple[int, int]) -> str:
        shown = ("unlimited" if v == self._unlimited else str(v) for v in pair)
        return "({}, {})".format(*shown)


def _cap(limit: int, mb: int) -> None:
    _, hard = resource.getrlimit(limit)
    soft = mb * 2**20 if hard == resource.RLIM_INFINITY else min(mb * 2**20, hard)
    resource.setrlimit(limit, (soft, hard))


def cap_file_size(mb: int) -> None:
    """Cap what the process writes to a file (a worker's log: its stdout
    and stderr) at *mb* MiB.  SIGXFSZ is ignored, so a write past the cap
    fails with ``OSError(EFBIG)`` where the module made it, instead of
    killing the process without a traceback."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    _cap(resource.RLIMIT_FSIZE, mb)


def cap_address_space(mb: int) -> None:
    """Cap the process's address space (``RLIMIT_AS``) at *mb* MiB: a
    module that allocates past it gets ``MemoryError``."""
    _cap(resource.RLIMIT_AS, mb)
