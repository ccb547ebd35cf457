"""Gallery (alloc.success-carries-R): commits R to the KVS, then answers SUCCESS
without R.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "alloc.success-carries-R"


class SuccessWithoutR(GalleryFifo):
    """Commits R to the KVS, then answers SUCCESS without R."""

    def _alloc_commit_continuation(self, future, args):
        msg, _R, _annotations = args
        future.get()
        self.handle.respond(msg, {"id": msg.payload["id"], "type": 0})


def mod_main(h, *args):
    SuccessWithoutR(h, *args).run()
