"""Gallery (annotations.no-stale): starts jobs with SUCCESS without clearing their
pending annotations.
"""

import heapq
import os
import sys

from flux.resource import InfeasibleRequest, InsufficientResources

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "annotations.no-stale"


class LeavesReasonPending(GalleryFifo):
    """Starts jobs with SUCCESS without clearing their pending annotations."""

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
                job.request.success(alloc, clear=False)
            heapq.heappop(self._queue)

    def forecast(self):
        for job in self._queue:
            update = {"reason_pending": "insufficient resources"}
            if job._last_annotation != update:
                job._last_annotation = update
                job.request.annotate({"sched": update})


def mod_main(h, *args):
    LeavesReasonPending(h, *args).run()
