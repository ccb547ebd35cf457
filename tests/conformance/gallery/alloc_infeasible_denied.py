"""Gallery (alloc.infeasible-denied): leaves infeasible jobs pending forever
(waits as if they might fit).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "alloc.infeasible-denied"


class KeepsInfeasible(GalleryFifo):
    """Leaves infeasible jobs pending forever (waits as if they might fit)."""

    def refuse(self, job, exc):
        return False  # the fault: wait as if the job might fit


def mod_main(h, *args):
    KeepsInfeasible(h, *args).run()
