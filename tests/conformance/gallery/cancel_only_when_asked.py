"""Gallery (cancel.only-when-asked): answers CANCEL, unasked, the first time a job
cannot start.
"""

import heapq
import os
import sys

from flux.resource import InfeasibleRequest, InsufficientResources

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "cancel.only-when-asked"


class CancelsUnasked(GalleryFifo):
    """Answers CANCEL, unasked, the first time a job cannot start."""

    def __init__(self, h, *args):
        super().__init__(h, *args)
        self._cancelled = set()

    def schedule(self):
        while self._queue:
            job = self._queue[0]
            try:
                alloc = self.resources.alloc(job.jobid, job.resource_request)
            except InsufficientResources:
                if job.jobid not in self._cancelled:
                    self._cancelled.add(job.jobid)
                    heapq.heappop(self._queue)
                    job.request.cancel()
                break
            except InfeasibleRequest as exc:
                job.request.deny(str(exc))
            else:
                job.request.success(alloc)
            heapq.heappop(self._queue)


def mod_main(h, *args):
    CancelsUnasked(h, *args).run()
