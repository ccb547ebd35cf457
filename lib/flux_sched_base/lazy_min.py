"""A set of values that answers only "which is the least?", cheaply.

The scheduler keeps, for every pending job, entries such as ``(cores
needed, jobid)`` only to know the least of them.  A sorted list pays a
bisection and a list insert or delete on every arrival and start;
:class:`LazyMin` pays a heap push on arrival, a set removal on start, and
drops removed entries from the heap only when they reach its top (or when
they outnumber the live ones: the heap never holds more than about twice
the live entries).
"""

from __future__ import annotations

import heapq
from collections.abc import Hashable


class LazyMin:
    """A set of distinct, ordered values with :meth:`least`."""

    __slots__ = ("_heap", "_live")

    def __init__(self) -> None:
        self._heap: list = []
        self._live: set = set()

    def add(self, value: Hashable) -> None:
        """Add *value* (not already present)."""
        self._live.add(value)
        heapq.heappush(self._heap, value)

    def remove(self, value: Hashable) -> None:
        """Remove *value*; KeyError if it is not present."""
        self._live.remove(value)
        if len(self._heap) > 2 * len(self._live) + 64:
            self._heap = list(self._live)
            heapq.heapify(self._heap)

    def least(self):
        """The least value, or None if there is none."""
        heap, live = self._heap, self._live
        while heap and heap[0] not in live:
            heapq.heappop(heap)
        return heap[0] if heap else None

    def clear(self) -> None:
        """Remove every value."""
        self._heap.clear()
        self._live.clear()

    def __len__(self) -> int:
        return len(self._live)


__all__ = ["LazyMin"]
