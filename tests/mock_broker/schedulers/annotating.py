"""Test schedulers that annotate pending jobs (for the annotation scenarios).

``AnnotatingScheduler`` is the minimal scheduler of flux-core's guide
*Writing a Python Scheduler* plus a ``forecast()`` that sets
``sched.reason_pending`` and ``sched.jobs_ahead`` on every queued job; it
relies on ``AllocRequest.success(clear=True)`` to null them when the job
starts.  ``StaleAnnotationsScheduler`` starts jobs with
``clear=False``, leaving those keys behind, which the annotation-clearing
scenario must catch.
"""

import heapq

from flux.resource import InfeasibleRequest, InsufficientResources
from flux.scheduler import Scheduler


class AnnotatingScheduler(Scheduler):
    clear_on_success = True

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
                job.request.success(alloc, clear=self.clear_on_success)
            heapq.heappop(self._queue)

    def forecast(self):
        for ahead, job in enumerate(sorted(self._queue)):
            annotation = {
                "reason_pending": "insufficient resources",
                "jobs_ahead": ahead,
            }
            if job._last_annotation != annotation:
                job._last_annotation = annotation
                job.request.annotate({"sched": annotation})


class StaleAnnotationsScheduler(AnnotatingScheduler):
    clear_on_success = False


def mod_main(h, *args):
    AnnotatingScheduler(h, *args).run()
