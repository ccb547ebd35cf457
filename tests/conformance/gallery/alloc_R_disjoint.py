"""Gallery (alloc.R-disjoint): does not record allocations in its pool, so
resources go out twice.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "alloc.R-disjoint"


class ForgetsAllocations(GalleryFifo):
    """Does not record allocations in its pool, so resources go out twice."""

    def start(self, job, alloc):
        self.resources.free(job.jobid, alloc, final=True)
        job.request.success(alloc)


def mod_main(h, *args):
    ForgetsAllocations(h, *args).run()
