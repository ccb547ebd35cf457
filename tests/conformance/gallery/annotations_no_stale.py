"""Gallery (annotations.no-stale): starts jobs with SUCCESS without clearing their
pending annotations.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "annotations.no-stale"


class LeavesReasonPending(GalleryFifo):
    """Starts jobs with SUCCESS without clearing their pending annotations."""

    def start(self, job, alloc):
        job.request.success(alloc, clear=False)

    def forecast(self):
        for job in self._queue:
            update = {"reason_pending": "insufficient resources"}
            if job._last_annotation != update:
                job._last_annotation = update
                job.request.annotate({"sched": update})


def mod_main(h, *args):
    LeavesReasonPending(h, *args).run()
