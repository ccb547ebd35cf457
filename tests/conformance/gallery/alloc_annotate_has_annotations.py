"""Gallery (alloc.annotate-has-annotations): sends ANNOTATE without annotations
for a job that has to wait.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "alloc.annotate-has-annotations"


class EmptyAnnotate(GalleryFifo):
    """Sends ANNOTATE without annotations for a job that has to wait."""

    def wait(self, job):
        job.request.annotate(None)


def mod_main(h, *args):
    EmptyAnnotate(h, *args).run()
