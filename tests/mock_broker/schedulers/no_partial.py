"""The seed scheduler, but it cannot take back partially released jobs."""

import heapq

from flux.resource import InfeasibleRequest, InsufficientResources
from flux.scheduler import Scheduler


class NoPartialScheduler(Scheduler):
    hello_partial_ok = False

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
    NoPartialScheduler(h, *args).run()
