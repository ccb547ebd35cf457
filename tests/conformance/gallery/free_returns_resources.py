"""Gallery (free.returns-resources): ignores partial frees: resources only return
on the final free.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "free.returns-resources"


class FinalFreeOnly(GalleryFifo):
    """Ignores partial frees: resources only return on the final free."""

    def free(self, jobid, R, final=False):
        if final:
            self.resources.free(jobid, None, final=True)


def mod_main(h, *args):
    FinalFreeOnly(h, *args).run()
