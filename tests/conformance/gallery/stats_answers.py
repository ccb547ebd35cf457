"""Gallery (stats.answers): never answers its stats-get request."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "stats.answers"


class SilentStats(GalleryFifo):
    """Never answers its stats-get request."""

    def _handle_stats_get(self, msg):
        pass


def mod_main(h, *args):
    SilentStats(h, *args).run()
