"""Gallery (restart.mid-stream): does not mark the jobs reported in hello as
allocated, so a restarted instance hands their resources out again.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "restart.mid-stream"


class ForgetsRunningOnRestart(GalleryFifo):
    """Does not mark the jobs reported in hello as allocated, so a restarted
    instance hands their resources out again.
    """

    def hello(self, jobid, priority, userid, t_submit, R):
        pass


def mod_main(h, *args):
    ForgetsRunningOnRestart(h, *args).run()
