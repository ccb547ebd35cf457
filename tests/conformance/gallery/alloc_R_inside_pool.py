"""Gallery (alloc.R-inside-pool): R names ranks outside the instance (the real
ranks plus 64).
"""

import os
import sys

from flux.idset import IDset

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "alloc.R-inside-pool"


class ShiftedRanks(GalleryFifo):
    """R names ranks outside the instance (the real ranks plus 64)."""

    def start(self, job, alloc):
        R = alloc.to_dict()
        self.resources.free(job.jobid, alloc, final=True)
        for entry in R["execution"]["R_lite"]:
            ranks = [rank + 64 for rank in IDset(entry["rank"])]
            entry["rank"] = str(IDset(ranks))
        R["execution"].pop("nodelist", None)
        job.request.success(R)


def mod_main(h, *args):
    ShiftedRanks(h, *args).run()
