"""The minimal example of flux-core's guide with R's times stamped.

flux-python's pool leaves an allocation's ``starttime`` and ``expiration``
at 0, and flux-core 0.88's job-exec enforces no time limit on an R whose
expiration is 0; flux-core's own sched-fifo stamps them before answering.
Here a pool class (the framework's ``pool_class`` hook) stamps them the
same way, and the guide's loop is left as it is.
"""

import os
import sys
import time

from flux.resource import ResourcePool

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from seed_minimal import SimpleScheduler  # noqa: E402


class StampingPool(ResourcePool):
    def alloc(self, jobid, request):
        alloc = super().alloc(jobid, request)
        now = time.time()
        alloc.set_starttime(now)
        if request.duration > 0.0:
            alloc.set_expiration(now + request.duration)
        elif self.expiration > 0.0:
            alloc.set_expiration(self.expiration)
        return alloc


class StampedScheduler(SimpleScheduler):
    pool_class = StampingPool


def mod_main(h, *args):
    StampedScheduler(h, *args).run()
