"""Gallery (cancel.only-when-asked): answers CANCEL, unasked, the first time a job
cannot start.
"""

import heapq
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "cancel.only-when-asked"


class CancelsUnasked(GalleryFifo):
    """Answers CANCEL, unasked, the first time a job cannot start."""

    def __init__(self, h, *args):
        super().__init__(h, *args)
        self._cancelled = set()

    def wait(self, job):
        if job.jobid not in self._cancelled:
            self._cancelled.add(job.jobid)
            heapq.heappop(self._queue)
            job.request.cancel()


def mod_main(h, *args):
    CancelsUnasked(h, *args).run()
