"""Gallery (cancel.answered-once): ignores sched.cancel (the request stays in its
queue, unanswered).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "cancel.answered-once"


class IgnoresCancel(GalleryFifo):
    """Ignores sched.cancel (the request stays in its queue, unanswered)."""

    def cancel(self, jobid):
        pass


def mod_main(h, *args):
    IgnoresCancel(h, *args).run()
