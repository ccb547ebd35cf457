"""The seed scheduler, logging what time and randomness look like to it."""

import heapq
import random
import time

from flux.resource import InsufficientResources
from flux.scheduler import Scheduler


class ClockProbe(Scheduler):
    def schedule(self):
        self.log.info(
            f"schedule time={time.time()!r} monotonic={time.monotonic()!r} "
            f"random={random.random()!r}"
        )
        while self._queue:
            job = self._queue[0]
            try:
                alloc = self.resources.alloc(job.jobid, job.resource_request)
            except InsufficientResources:
                break
            job.request.success(alloc)
            heapq.heappop(self._queue)


def mod_main(h, *args):
    ClockProbe(h, *args).run()
