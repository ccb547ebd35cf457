"""robust.no-livelock: a zero-delay timer re-armed from its own callback.

The reactor runs every timer due *now* before it returns, so this timer
fires again and again inside one reactor iteration, each time sending an
ANNOTATE, and control never returns to the broker.  The kit's worker counts
callbacks per reactor iteration against the messages-per-instant budget.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "robust.no-livelock"


class SelfRearming(GalleryFifo):
    _spin = None

    def schedule(self):
        super().schedule()
        if self._queue and self._spin is None:
            self._spins = 0
            self._spin = self.handle.timer_watcher_create(0.0, self._annotate)
            self._spin.start()

    def _annotate(self, h, watcher, revents, args):
        if self._queue:
            self._spins += 1
            reason = f"retry {self._spins}"
            self._queue[0].request.annotate({"sched": {"reason_pending": reason}})
            watcher.start()


def mod_main(h, *args):
    SelfRearming(h, *args).run()
