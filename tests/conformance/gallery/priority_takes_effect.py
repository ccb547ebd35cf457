"""Gallery (priority.takes-effect): ignores sched.prioritize."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "priority.takes-effect"


class IgnoresPriority(GalleryFifo):
    """Ignores sched.prioritize."""

    def prioritize(self, jobs):
        pass


def mod_main(h, *args):
    IgnoresPriority(h, *args).run()
