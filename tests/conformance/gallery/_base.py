"""A correct scheduler for the gallery: strict FIFO on the upstream API.

Every gallery module subclasses :class:`GalleryFifo` and breaks exactly one
thing.  Gallery modules are loaded by path, the way a third-party author's
file is, so they put this folder on ``sys.path`` to import this base.
"""

import errno
import heapq

from flux.resource import InfeasibleRequest, InsufficientResources
from flux.scheduler import Scheduler

from flux_sched_base.jobspec import jobspec_problem


class GalleryFifo(Scheduler):
    """Starts jobs in queue order while they fit; denies infeasible and
    malformed ones (flux-python's own parser accepts some malformed
    jobspecs, so the jobspec is checked first)."""

    def alloc(self, request, jobid, priority, userid, t_submit, jobspec):
        problem = jobspec_problem(jobspec)
        if problem is not None:
            request.deny(f"invalid jobspec: {problem}")
            return
        super().alloc(request, jobid, priority, userid, t_submit, jobspec)

    def feasibility_check(self, msg, jobspec):
        problem = jobspec_problem(jobspec)
        if problem is not None:
            self.handle.respond_error(msg, errno.EINVAL, f"invalid jobspec: {problem}")
            return
        super().feasibility_check(msg, jobspec)

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
