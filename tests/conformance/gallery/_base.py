"""A correct scheduler for the gallery: strict FIFO on the upstream API.

Every gallery module subclasses :class:`GalleryFifo` and breaks exactly one
thing.  Gallery modules are loaded by path, the way a third-party author's
file is, so they put this folder on ``sys.path`` to import this base.
"""

import errno
import heapq
import time

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
        """Start queued jobs in order until the head one does not fit.

        Each outcome for the head job goes through one override point, so
        a gallery module can break one of them without copying this loop:
        :meth:`stamp` and :meth:`start` (the job fits), :meth:`wait` (it does not fit yet) and
        :meth:`refuse` (it can never fit).
        """
        while self._queue:
            job = self._queue[0]
            try:
                alloc = self.resources.alloc(job.jobid, job.resource_request)
            except InsufficientResources:
                self.wait(job)
                break
            except InfeasibleRequest as exc:
                if not self.refuse(job, exc):
                    break
            else:
                self.stamp(job, alloc)
                self.start(job, alloc)
            heapq.heappop(self._queue)

    def stamp(self, job, alloc):
        """Set R's times on ``alloc`` as flux-core's sched-fifo does: the
        pool leaves them 0, and job-exec would enforce no time limit."""
        now = time.time()
        alloc.set_starttime(now)
        duration = job.resource_request.duration
        if duration > 0.0:
            alloc.set_expiration(now + duration)
        elif self.resources.expiration > 0.0:
            alloc.set_expiration(self.resources.expiration)

    def start(self, job, alloc):
        """Answer ``job`` with SUCCESS for ``alloc``, which the pool already
        records (and :meth:`stamp` dated); ``job`` is still at the head of the
        queue and is popped after this returns."""
        job.request.success(alloc)

    def wait(self, job):
        """``job``, at the head of the queue, does not fit yet; this pass ends
        when this returns.  The base leaves it queued and sends nothing."""

    def refuse(self, job, exc):
        """``job`` can never fit (``exc`` is the :class:`InfeasibleRequest`):
        deny it and return True, so it is popped and the pass goes on.
        Return False to leave it at the head of the queue and end the pass."""
        job.request.deny(str(exc))
        return True
