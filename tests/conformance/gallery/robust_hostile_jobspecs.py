"""Gallery: trusts jobspec counts (crashes on a malformed one).

Before queueing a request this module totals the cores it asks for by
walking the jobspec itself, trusting its shape: ``resources`` is a list of
vertices, every vertex has a type and an integer (or range object) count,
children are under ``with``.  Valid jobspecs walk fine; a malformed one
raises in the alloc callback, and the scheduler module exits.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "robust.hostile-jobspecs"


def _cores(vertices):
    total = 0
    for vertex in vertices:
        count = vertex["count"]
        if isinstance(count, dict):
            count = count["min"]
        if vertex["type"] == "core":
            total += count
        else:
            total += count * _cores(vertex.get("with", []))
    return total


class TrustingFifo(GalleryFifo):
    """GalleryFifo that reads the request's size straight from the jobspec."""

    def __init__(self, h, *args):
        super().__init__(h, *args)
        self.cores_requested = 0

    def alloc(self, request, jobid, priority, userid, t_submit, jobspec):
        self.cores_requested += _cores(jobspec["resources"])  # the fault
        super().alloc(request, jobid, priority, userid, t_submit, jobspec)


def mod_main(h, *args):
    TrustingFifo(h, *args).run()
