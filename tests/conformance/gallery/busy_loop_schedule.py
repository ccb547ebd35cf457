"""callbacks.prompt: schedule() spins forever once a job waits.

The first pass that leaves a job queued never returns, so the module's
reactor (and with it the broker) is blocked.  The kit's watchdog stops the
worker after the callback budget and shows this file's loop line.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "callbacks.prompt"


class BusyLoop(GalleryFifo):
    def schedule(self):
        super().schedule()
        while self._queue:  # waits for resources that cannot come back
            pass


def mod_main(h, *args):
    BusyLoop(h, *args).run()
