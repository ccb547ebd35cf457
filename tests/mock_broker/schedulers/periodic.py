"""The minimal scheduler (R dated) with a repeating timer beside it.

Loaded as ``periodic.py:Class``.  ``PeriodicStats`` logs a queue summary
every 60 s, as operators like in ``flux dmesg``, and ``UnrefStats`` does
the same from an unreferenced timer: both are correct and must let a run
settle.  ``PollingStats`` sends the broker a request at every firing and
never lets one settle; ``LateLookup`` logs every 60 s and sends one
request from a one-shot timer at t=500, which a settled run must have
waited for.
"""

import os
import sys

# The guide's minimal scheduler, R dated (beside this file), schedules.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stamped_minimal import StampedScheduler as SimpleScheduler  # noqa: E402

PERIOD = 60.0


class PeriodicStats(SimpleScheduler):
    def __init__(self, h, *args):
        super().__init__(h, *args)
        self.stats_timer = h.timer_watcher_create(PERIOD, self.tick, repeat=PERIOD)
        self.stats_timer.start()

    def tick(self, *_):
        self.log.info(f"stats: {len(self._queue)} pending")


class UnrefStats(PeriodicStats):
    def __init__(self, h, *args):
        super().__init__(h, *args)
        self.stats_timer.unref()


class PollingStats(PeriodicStats):
    def tick(self, *_):
        self.handle.rpc("kvs.lookup", {"key": "resource.R"})  # the poll


class LateLookup(PeriodicStats):
    def __init__(self, h, *args):
        super().__init__(h, *args)
        self.late = h.timer_watcher_create(500.0, self.lookup)
        self.late.start()

    def lookup(self, *_):
        self.handle.rpc("kvs.lookup", {"key": "resource.R"})
