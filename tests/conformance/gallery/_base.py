"""A correct scheduler for the gallery: strict FIFO on the upstream API.

Every gallery module subclasses :class:`GalleryFifo` and breaks exactly one
thing.  Gallery modules are loaded by path, the way a third-party author's
file is, so they put this folder on ``sys.path`` to import this base.
"""

import heapq

from flux.resource import InfeasibleRequest, InsufficientResources
from flux.scheduler import Scheduler


class GalleryFifo(Scheduler):
    """Starts jobs in queue order while they fit; denies infeasible ones."""

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
            heapq.heappop(self._queue)
