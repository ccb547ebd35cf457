"""robust.no-livelock: a zero-delay timer that annotates the head job forever.

While a job waits, a zero-delay timer sends an ANNOTATE for it, and a check
watcher re-arms the timer at the end of every reactor iteration.  Each
iteration therefore sends one message at the same virtual instant, and the
clock never moves: the broker stops after its messages-per-instant budget
(BrokerLivelock) with the ANNOTATE flood in the transcript.

(A timer re-armed from its own callback loops *inside* one reactor
iteration instead; livelock_timer_loop.py shows that variant.)
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "robust.no-livelock"


class Spinner(GalleryFifo):
    _spin = None

    def schedule(self):
        super().schedule()
        if self._queue and self._spin is None:
            self._spins = 0
            self._spin = self.handle.timer_watcher_create(0.0, self._annotate)
            self._rearm = self.handle.check_watcher_create(self._again)
            self._spin.start()
            self._rearm.start()

    def _annotate(self, h, watcher, revents, args):
        if self._queue:
            self._spins += 1
            reason = f"retry {self._spins}"
            self._queue[0].request.annotate({"sched": {"reason_pending": reason}})

    def _again(self, h, watcher, revents, args):
        if self._queue:
            self._spin.start()  # zero delay: due again at once
        else:
            self._spin.stop()
            self._rearm.stop()
            self._spin = None


def mod_main(h, *args):
    Spinner(h, *args).run()
