"""Gallery (alloc.R-inside-pool): R names ranks outside the instance (the real
ranks plus 64).
"""

import heapq
import os
import sys

from flux.idset import IDset
from flux.resource import InfeasibleRequest, InsufficientResources

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "alloc.R-inside-pool"


class ShiftedRanks(GalleryFifo):
    """R names ranks outside the instance (the real ranks plus 64)."""

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
                R = alloc.to_dict()
                self.resources.free(job.jobid, alloc, final=True)
                for entry in R["execution"]["R_lite"]:
                    ranks = [rank + 64 for rank in IDset(entry["rank"])]
                    entry["rank"] = str(IDset(ranks))
                R["execution"].pop("nodelist", None)
                job.request.success(R)
            heapq.heappop(self._queue)


def mod_main(h, *args):
    ShiftedRanks(h, *args).run()
