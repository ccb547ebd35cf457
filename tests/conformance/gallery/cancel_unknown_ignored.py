"""Gallery (cancel.unknown-ignored): answers a sched.cancel for a running job with
CANCEL.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "cancel.unknown-ignored"


class CancelsRunning(GalleryFifo):
    """Answers a sched.cancel for a running job with CANCEL."""

    def __init__(self, h, *args):
        super().__init__(h, *args)
        self._started = {}

    def start(self, job, alloc):
        self._started[job.jobid] = job.request
        job.request.success(alloc)

    def free(self, jobid, R, final=False):
        super().free(jobid, R, final)
        if final:
            self._started.pop(jobid, None)

    def cancel(self, jobid):
        request = self._started.get(jobid)
        if request is not None:
            request.cancel()
            return
        super().cancel(jobid)


def mod_main(h, *args):
    CancelsRunning(h, *args).run()
