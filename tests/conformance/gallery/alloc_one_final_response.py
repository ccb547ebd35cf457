"""Gallery (alloc.one-final-response): sends SUCCESS twice for the same job."""

import heapq
import os
import sys

from flux.resource import InfeasibleRequest, InsufficientResources

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "alloc.one-final-response"


class SucceedsTwice(GalleryFifo):
    """Sends SUCCESS twice for the same job."""

    def schedule(self):
        while self._queue:
            job = self._queue[0]
            try:
                alloc = self.resources.alloc(job.jobid, job.resource_request)
            except InsufficientResources:
                break
            except InfeasibleRequest as exc:
                job.request.deny(str(exc))
            else:
                job.request.success(alloc)
                job.request.success(alloc)
            heapq.heappop(self._queue)


def mod_main(h, *args):
    SucceedsTwice(h, *args).run()
