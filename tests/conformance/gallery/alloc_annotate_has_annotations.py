"""Gallery (alloc.annotate-has-annotations): sends ANNOTATE without annotations
for a job that has to wait.
"""

import heapq
import os
import sys

from flux.resource import InfeasibleRequest, InsufficientResources

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "alloc.annotate-has-annotations"


class EmptyAnnotate(GalleryFifo):
    """Sends ANNOTATE without annotations for a job that has to wait."""

    def schedule(self):
        while self._queue:
            job = self._queue[0]
            try:
                alloc = self.resources.alloc(job.jobid, job.resource_request)
            except InsufficientResources:
                job.request.annotate(None)
                break
            except InfeasibleRequest as exc:
                job.request.deny(str(exc))
            else:
                job.request.success(alloc)
            heapq.heappop(self._queue)


def mod_main(h, *args):
    EmptyAnnotate(h, *args).run()
