"""Gallery (alloc.response-well-formed): answers with an alloc response of unknown
type 5 instead of SUCCESS.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "alloc.response-well-formed"


class UnknownType(GalleryFifo):
    """Answers with an alloc response of unknown type 5 instead of SUCCESS."""

    def start(self, job, alloc):
        self.resources.free(job.jobid, alloc, final=True)
        self.handle.respond(job.request._msg, {"id": job.jobid, "type": 5})


def mod_main(h, *args):
    UnknownType(h, *args).run()
