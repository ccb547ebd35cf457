"""Gallery (ready.queue-depth): the queue-depth argument is accepted but ignored."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "ready.queue-depth"


class IgnoresQueueDepth(GalleryFifo):
    """The queue-depth argument is accepted but ignored."""

    def __init__(self, h, *args):
        super().__init__(h, *args)
        self.queue_depth = "unlimited"


def mod_main(h, *args):
    IgnoresQueueDepth(h, *args).run()
