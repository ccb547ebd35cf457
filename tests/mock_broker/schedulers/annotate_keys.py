"""The seed scheduler plus annotations on pending and started jobs.

Pending jobs get ``sched.reason_pending`` and ``sched.jobs_ahead`` and a
key outside ``sched``, ``user.seen_by``; a started job gets
``sched.resource_summary``, and ``success()`` (clear=True) nulls the
pending keys.
"""

import heapq

from flux.resource import InfeasibleRequest, InsufficientResources
from flux.scheduler import Scheduler


class AnnotateKeysScheduler(Scheduler):
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
                summary = {"sched": {"resource_summary": alloc.dumps()}}
                job.request.success(alloc, annotations=summary)
            heapq.heappop(self._queue)
        for ahead, job in enumerate(sorted(self._queue)):
            update = {
                "sched": {
                    "reason_pending": "insufficient resources",
                    "jobs_ahead": ahead,
                },
                "user": {"seen_by": self.name},
            }
            if job._last_annotation != update:
                job._last_annotation = update
                job.request.annotate(update)


def mod_main(h, *args):
    AnnotateKeysScheduler(h, *args).run()
