"""Gallery (alloc.R-committed-first): answers SUCCESS without committing R to the
KVS first.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "alloc.R-committed-first"


class SkipsCommit(GalleryFifo):
    """Answers SUCCESS without committing R to the KVS first."""

    def alloc_success(self, msg, R, annotations=None):
        response = {"id": msg.payload["id"], "type": 0, "R": R}
        if annotations is not None:
            response["annotations"] = annotations
        self.handle.respond(msg, response)


def mod_main(h, *args):
    SkipsCommit(h, *args).run()
