"""Gallery (alloc.R-matches-request): gives multi-slot jobs one core short (its
pool records the short R).
"""

import os
import sys

from flux.idset import IDset
from flux.resource import ResourcePool

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "alloc.R-matches-request"


class OneCoreShort(GalleryFifo):
    """Gives multi-slot jobs one core short (its pool records the short R)."""

    def start(self, job, alloc):
        if job.resource_request.nslots > 1:
            alloc = self._one_core_short(job.jobid, alloc)
        job.request.success(alloc)

    def _one_core_short(self, jobid, alloc):
        R = alloc.to_dict()
        children = R["execution"]["R_lite"][0]["children"]
        children["core"] = str(IDset(list(IDset(children["core"]))[:-1]))
        self.resources.free(jobid, alloc, final=True)
        short = ResourcePool(R)
        self.resources.register_alloc(jobid, short)
        return R


def mod_main(h, *args):
    OneCoreShort(h, *args).run()
