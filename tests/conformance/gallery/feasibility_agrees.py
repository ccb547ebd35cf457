"""Gallery (feasibility.agrees): feasibility.check accepts everything."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "feasibility.agrees"


class AcceptsEverything(GalleryFifo):
    """Feasibility.check accepts everything."""

    def feasibility_check(self, msg, jobspec):
        self.handle.respond(msg, None)


def mod_main(h, *args):
    AcceptsEverything(h, *args).run()
