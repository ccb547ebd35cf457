"""Correct FIFO that, in its first schedule() pass, writes the file named
by SCHEDKIT_TEST_MARKER and then sleeps: the test interrupts the kit
while the scheduler is stuck (the CLI must exit 130 and blame nobody)."""

import os
import sys
import time

sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gallery")
)
from _base import GalleryFifo  # noqa: E402


class Sleeper(GalleryFifo):
    def schedule(self):
        marker = os.environ.get("SCHEDKIT_TEST_MARKER")
        if marker:
            with open(marker, "w") as f:
                f.write("stuck\n")
        time.sleep(600)
        yield from ()


def mod_main(h, *args):
    Sleeper(h, *args).run()
