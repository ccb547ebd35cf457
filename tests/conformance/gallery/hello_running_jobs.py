"""Gallery (hello.running-jobs): does not mark the jobs reported in hello as
allocated.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "hello.running-jobs"


class ForgetsHello(GalleryFifo):
    """Does not mark the jobs reported in hello as allocated."""

    def hello(self, jobid, priority, userid, t_submit, R):
        pass


def mod_main(h, *args):
    ForgetsHello(h, *args).run()
