"""Gallery (alloc.one-final-response): sends SUCCESS twice for the same job."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "alloc.one-final-response"


class SucceedsTwice(GalleryFifo):
    """Sends SUCCESS twice for the same job."""

    def start(self, job, alloc):
        job.request.success(alloc)
        job.request.success(alloc)


def mod_main(h, *args):
    SucceedsTwice(h, *args).run()
