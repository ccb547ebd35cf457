"""Gallery (alloc.infeasible-denied): leaves infeasible jobs pending forever
(waits as if they might fit).
"""

import heapq
import os
import sys

from flux.resource import InfeasibleRequest, InsufficientResources

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "alloc.infeasible-denied"


class KeepsInfeasible(GalleryFifo):
    """Leaves infeasible jobs pending forever (waits as if they might fit)."""

    def schedule(self):
        while self._queue:
            job = self._queue[0]
            try:
                alloc = self.resources.alloc(job.jobid, job.resource_request)
            except (InsufficientResources, InfeasibleRequest):
                break
            job.request.success(alloc)
            heapq.heappop(self._queue)


def mod_main(h, *args):
    KeepsInfeasible(h, *args).run()
