"""Gallery (withdrawal.fresh-alloc): remembers withdrawn jobs and denies their
second alloc.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "withdrawal.fresh-alloc"


class DeniesReturningJobs(GalleryFifo):
    """Remembers withdrawn jobs and denies their second alloc."""

    def __init__(self, h, *args):
        super().__init__(h, *args)
        self._withdrawn = set()

    def cancel(self, jobid):
        if any(job.jobid == jobid for job in self._queue):
            self._withdrawn.add(jobid)
        super().cancel(jobid)

    def alloc(self, request, jobid, priority, userid, t_submit, jobspec):
        if jobid in self._withdrawn:
            request.deny("this job was cancelled")
            return
        super().alloc(request, jobid, priority, userid, t_submit, jobspec)


def mod_main(h, *args):
    DeniesReturningJobs(h, *args).run()
