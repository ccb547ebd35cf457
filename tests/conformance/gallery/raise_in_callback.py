"""robust.no-crash: schedule() raises once a job has to wait.

The exception escapes the timer callback that runs schedule(), stops the
reactor and ends mod_main with it: the module exits with an error.  The
evidence is its traceback, down to this file's line.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "robust.no-crash"


class Raiser(GalleryFifo):
    def schedule(self):
        super().schedule()
        if self._queue:
            waiting = {}
            return waiting[self._queue[0].jobid]  # KeyError


def mod_main(h, *args):
    Raiser(h, *args).run()
