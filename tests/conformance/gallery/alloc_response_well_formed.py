"""Gallery (alloc.response-well-formed): answers with an alloc response of unknown
type 5 instead of SUCCESS.
"""

import heapq
import os
import sys

from flux.resource import InfeasibleRequest, InsufficientResources

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "alloc.response-well-formed"


class UnknownType(GalleryFifo):
    """Answers with an alloc response of unknown type 5 instead of SUCCESS."""

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
                self.handle.respond(job.request._msg, {"id": job.jobid, "type": 5})
            heapq.heappop(self._queue)


def mod_main(h, *args):
    UnknownType(h, *args).run()
