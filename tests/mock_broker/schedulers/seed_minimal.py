"""The minimal example of flux-core's guide *Writing a Python Scheduler*,
written as a third-party author would."""

import heapq

from flux.resource import InfeasibleRequest, InsufficientResources
from flux.scheduler import Scheduler


class SimpleScheduler(Scheduler):
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


def mod_main(h, *args):
    SimpleScheduler(h, *args).run()
