"""A FIFO that answers with R as flux-python's pool makes it, expiration 0:
flux-core 0.88's job-exec then enforces no time limit (the minimal scheduler
of flux-core's guide does this)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "alloc.R-times"


class Unstamped(GalleryFifo):
    def stamp(self, job, alloc):
        pass


def mod_main(h, *args):
    Unstamped(h, *args).run()
