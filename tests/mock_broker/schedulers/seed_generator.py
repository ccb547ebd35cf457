"""The generator-based example of flux-core's guide *Writing a Python Scheduler*:
one job per reactor iteration."""

import heapq

from flux.resource import InfeasibleRequest, InsufficientResources
from flux.scheduler import Scheduler


class GeneratorScheduler(Scheduler):
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
            yield  # hand control to the reactor


def mod_main(h, *args):
    GeneratorScheduler(h, *args).run()
