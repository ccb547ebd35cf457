"""robust.memory: schedule() keeps buffers for every pass, without bound.

The kit's worker runs under an address-space limit (RLIMIT_AS), so the
allocation fails with MemoryError inside the callback and the module exits.
The buffers are zero pages never written (calloc), so they cost address
space, not real memory, on the way to the limit.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "robust.memory"


class Hoarder(GalleryFifo):
    def schedule(self):
        history = []
        while self._queue:
            history.append(bytes(64 * 1024 * 1024))  # "snapshot the pool"
        super().schedule()


def mod_main(h, *args):
    Hoarder(h, *args).run()
