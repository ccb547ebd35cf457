"""Gallery (alloc.constraints-honoured): ignores constraints at allocation
(feasibility.check still honours them).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "alloc.constraints-honoured"


class IgnoresConstraints(GalleryFifo):
    """Ignores constraints at allocation (feasibility.check still honours them)."""

    def alloc(self, request, jobid, priority, userid, t_submit, jobspec):
        super().alloc(request, jobid, priority, userid, t_submit, jobspec)
        for job in self._queue:
            if job.jobid == jobid:
                job.resource_request.constraint = None


def mod_main(h, *args):
    IgnoresConstraints(h, *args).run()
