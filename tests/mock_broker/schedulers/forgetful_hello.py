"""A faulty test scheduler: it ignores the jobs hello reports.

It is the minimal scheduler of flux-core's guide *Writing a Python Scheduler*
with a ``hello()`` that does not mark the running job's R allocated, so it
hands those nodes out again; the referee reports the overlap
(``R-overlap``).
"""

import heapq

from flux.resource import InfeasibleRequest, InsufficientResources
from flux.scheduler import Scheduler


class ForgetfulHelloScheduler(Scheduler):
    def hello(self, jobid, priority, userid, t_submit, R):
        pass

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
    ForgetfulHelloScheduler(h, *args).run()
