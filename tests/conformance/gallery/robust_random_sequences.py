"""Gallery: forgets jobs withdrawn and reallocated after a restart.

After a restart that took running jobs back in its hello, this module
remembers every job whose request it answered with CANCEL and parks any
later alloc request for the same job id, as if it were a duplicate: it is
never scheduled (a sched.cancel for it is still answered).  But the job-manager sends a fresh alloc for the same job after
a withdrawal in limited mode, or after a hold is released: that job then
waits in SCHED forever.  It takes a restart with running jobs, then a
withdrawal or a hold and release, in that order: a random operation
sequence finds it, a single scenario rarely does.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "robust.random-sequences"


class ForgetsAfterRestart(GalleryFifo):
    """GalleryFifo with a stale-request filter armed by a restart."""

    def __init__(self, h, *args):
        super().__init__(h, *args)
        self._recovered = False
        self._answered = set()
        self._parked = {}

    def hello(self, jobid, priority, userid, t_submit, R):
        super().hello(jobid, priority, userid, t_submit, R)
        self._recovered = True

    def cancel(self, jobid):
        parked = self._parked.pop(jobid, None)
        if parked is not None:
            parked.cancel()
            return
        if self._recovered:
            self._answered.add(jobid)
        super().cancel(jobid)

    def alloc(self, request, jobid, priority, userid, t_submit, jobspec):
        if jobid in self._answered:
            self._parked[jobid] = request  # the fault: taken for a duplicate
            return
        super().alloc(request, jobid, priority, userid, t_submit, jobspec)


def mod_main(h, *args):
    ForgetsAfterRestart(h, *args).run()
