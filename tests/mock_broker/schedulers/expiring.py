"""The seed scheduler, stamping start and expiration on R.

``expiration=accept|enosys|refuse`` chooses how it answers
``sched.expiration``; any other argument is refused by the base class.
"""

import errno
import heapq
import time

from flux.resource import InfeasibleRequest, InsufficientResources
from flux.scheduler import Scheduler


class ExpiringScheduler(Scheduler):
    def __init__(self, h, *args):
        super().__init__(h, *args)
        self.on_expiration = "accept"
        for arg in list(self._pending_args):
            if arg.startswith("expiration="):
                self.on_expiration = arg.split("=", 1)[1]
                self._pending_args.remove(arg)

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
                now = time.time()
                alloc.set_starttime(now)
                duration = job.resource_request.duration
                if duration > 0:
                    alloc.set_expiration(now + duration)
                job.request.success(alloc)
            heapq.heappop(self._queue)

    def expiration(self, msg, jobid, expiration):
        if self.on_expiration == "enosys":
            self.handle.respond_error(msg, errno.ENOSYS, "expiration not supported")
        elif self.on_expiration == "refuse":
            self.handle.respond_error(msg, errno.EINVAL, "no extensions here")
        else:
            self.resources.update_expiration(jobid, expiration)
            self.handle.respond(msg, None)


def mod_main(h, *args):
    ExpiringScheduler(h, *args).run()
