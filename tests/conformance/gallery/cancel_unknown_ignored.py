"""Gallery (cancel.unknown-ignored): answers a sched.cancel for a running job with
CANCEL.
"""

import heapq
import os
import sys

from flux.resource import InfeasibleRequest, InsufficientResources

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "cancel.unknown-ignored"


class CancelsRunning(GalleryFifo):
    """Answers a sched.cancel for a running job with CANCEL."""

    def __init__(self, h, *args):
        super().__init__(h, *args)
        self._started = {}

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
                self._started[job.jobid] = job.request
                job.request.success(alloc)
            heapq.heappop(self._queue)

    def free(self, jobid, R, final=False):
        super().free(jobid, R, final)
        if final:
            self._started.pop(jobid, None)

    def cancel(self, jobid):
        request = self._started.get(jobid)
        if request is not None:
            request.cancel()
            return
        super().cancel(jobid)


def mod_main(h, *args):
    CancelsRunning(h, *args).run()
