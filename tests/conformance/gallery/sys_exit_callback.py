"""robust.no-crash: sys.exit(2) in the free callback.

SystemExit escapes the callback and ends mod_main: the module exits with an
error (the referee's module-exited), the worker itself survives.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "robust.no-crash"


class ExitOnFree(GalleryFifo):
    def free(self, jobid, R, final=False):
        sys.exit(2)


def mod_main(h, *args):
    ExitOnFree(h, *args).run()
