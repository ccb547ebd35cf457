"""The gallery's correct FIFO: every clause passes."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = None
POLICY = "fifo"


def mod_main(h, *args):
    GalleryFifo(h, *args).run()
