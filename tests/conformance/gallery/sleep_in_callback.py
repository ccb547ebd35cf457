"""callbacks.prompt: a real time.sleep(1000) in the alloc callback.

Only time.time() and time.monotonic() are virtual under the mock broker;
time.sleep() blocks for real, as it would block a real broker's reactor.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "callbacks.prompt"


class Sleeper(GalleryFifo):
    def alloc(self, request, *args):
        super().alloc(request, *args)
        time.sleep(1000)  # "wait a bit for more jobs to arrive"


def mod_main(h, *args):
    Sleeper(h, *args).run()
