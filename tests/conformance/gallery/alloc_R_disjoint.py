"""Gallery (alloc.R-disjoint): does not record allocations in its pool, so
resources go out twice.
"""

import heapq
import os
import sys

from flux.resource import InfeasibleRequest, InsufficientResources

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "alloc.R-disjoint"


class ForgetsAllocations(GalleryFifo):
    """Does not record allocations in its pool, so resources go out twice."""

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
                self.resources.free(job.jobid, alloc, final=True)
                job.request.success(alloc)
            heapq.heappop(self._queue)


def mod_main(h, *args):
    ForgetsAllocations(h, *args).run()
