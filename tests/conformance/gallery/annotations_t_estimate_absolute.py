"""Gallery (annotations.t-estimate-absolute): sends sched.t_estimate as a duration
(seconds from now).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "annotations.t-estimate-absolute"


class DurationEstimates(GalleryFifo):
    """Sends sched.t_estimate as a duration (seconds from now)."""

    def forecast(self):
        for ahead, job in enumerate(sorted(self._queue)):
            update = {"t_estimate": 60.0 * (ahead + 1)}
            if job._last_annotation != update:
                job._last_annotation = update
                job.request.annotate({"sched": update})


def mod_main(h, *args):
    DurationEstimates(h, *args).run()
