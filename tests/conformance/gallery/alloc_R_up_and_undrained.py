"""Gallery (alloc.R-up-and-undrained): ignores down and drained updates: every
rank stays up in its pool.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "alloc.R-up-and-undrained"


class IgnoresDown(GalleryFifo):
    """Ignores down and drained updates: every rank stays up in its pool."""

    def resource_update(self):
        self.resources.mark_up("all")


def mod_main(h, *args):
    IgnoresDown(h, *args).run()
