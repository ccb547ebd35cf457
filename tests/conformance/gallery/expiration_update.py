"""Gallery (expiration.update): never answers sched.expiration."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "expiration.update"


class IgnoresExpiration(GalleryFifo):
    """Never answers sched.expiration."""

    def expiration(self, msg, jobid, expiration):
        pass


def mod_main(h, *args):
    IgnoresExpiration(h, *args).run()
