"""FIFO that backfills: a job that does not fit does not block the jobs
behind it, any job that fits starts."""

import heapq
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402
from flux.resource import InfeasibleRequest, InsufficientResources  # noqa: E402

CLAUSE = "policy.fifo-order"
POLICY = "fifo"


class FifoThatBackfills(GalleryFifo):
    def schedule(self):
        done = set()
        for job in sorted(self._queue):
            try:
                alloc = self.resources.alloc(job.jobid, job.resource_request)
            except InsufficientResources:
                continue  # the fault: FIFO would stop here
            except InfeasibleRequest as exc:
                job.request.deny(str(exc))
            else:
                self.stamp(job, alloc)
                job.request.success(alloc)
            done.add(job.jobid)
        self._queue = [j for j in self._queue if j.jobid not in done]
        heapq.heapify(self._queue)


def mod_main(h, *args):
    FifoThatBackfills(h, *args).run()
