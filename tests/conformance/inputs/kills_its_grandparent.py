"""Kills the process that started the kit's keeper: the kit's test process
(an xdist worker under ``-n N``).  The probe it was running is lost."""

import os
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "gallery"))
from _base import GalleryFifo  # noqa: E402


def _parent_of(pid: int) -> int:
    with open(f"/proc/{pid}/stat", "rb") as f:
        return int(f.read().rpartition(b")")[2].split()[1])


class KillsTheKit(GalleryFifo):
    def schedule(self):
        os.kill(_parent_of(os.getppid()), signal.SIGKILL)
        time.sleep(60)


def mod_main(h, *args):
    KillsTheKit(h, *args).run()
