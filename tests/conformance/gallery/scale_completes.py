"""Gallery: correct, but each pass rescans every job it has ever seen.

A FIFO that keeps its own job table and never prunes it: every finished
job stays in the list, and every scheduling pass walks the whole list,
trying each remembered request against a scratch copy of the pool to
refresh a "queue demand" figure before scheduling.  The pass is a
generator that yields after each remembered job, so no single callback
is slow: only the whole is.  The schedule is the
correct FIFO, but a pass costs time in proportion to every job seen so
far: the total grows with the square of the job count, and a 10,000-job
workload cannot finish within the scale budget.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402
from flux.resource import InfeasibleRequest, InsufficientResources  # noqa: E402

CLAUSE = "scale.completes"


class RescanningFifo(GalleryFifo):
    """GalleryFifo with an ever-growing table rescanned on every pass."""

    def __init__(self, h, *args):
        super().__init__(h, *args)
        self._seen = []  # every request ever received, finished ones too
        self.demand = 0

    def alloc(self, request, jobid, priority, userid, t_submit, jobspec):
        self._seen.append(jobspec)
        super().alloc(request, jobid, priority, userid, t_submit, jobspec)

    def schedule(self):
        """A generator pass (each step is short; the pass is long)."""
        fits = 0
        for i, jobspec in enumerate(self._seen):  # the fault: never pruned
            scratch = self.resources.copy()
            try:
                scratch.alloc((1 << 60) + i, scratch.parse_resource_request(jobspec))
                fits += 1
            except (InsufficientResources, InfeasibleRequest, ValueError):
                pass
            yield
        self.demand = fits
        super().schedule()


def mod_main(h, *args):
    RescanningFifo(h, *args).run()
