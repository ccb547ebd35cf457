"""robust.no-crash: a segmentation fault in schedule() (reads address 0).

The worker dies of SIGSEGV; faulthandler writes the Python stack (this
file's line included) to the worker's log, whose tail is the evidence.
"""

import ctypes
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "robust.no-crash"


class Segfault(GalleryFifo):
    def schedule(self):
        if self._queue:
            ctypes.string_at(0)
        super().schedule()


def mod_main(h, *args):
    Segfault(h, *args).run()
