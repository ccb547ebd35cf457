"""robust.no-livelock: a pass that waits inside itself for room.

When the head job does not fit, the pass yields and tries again, as if
the resources could free while it waits.  They can: the framework runs
other events between yields.  But no event comes at this instant, so the
pass yields without end while the virtual clock stands still; a real
broker would spin a core on it whenever a job waits.  The broker stops
after its reactor-iterations-per-instant budget (BrokerLivelock), with
the pass's file and line in the evidence.
"""

import heapq
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402
from flux.resource import InfeasibleRequest, InsufficientResources  # noqa: E402

CLAUSE = "robust.no-livelock"


class WaitingInPass(GalleryFifo):
    def schedule(self):
        while self._queue:
            job = self._queue[0]
            try:
                alloc = self.resources.alloc(job.jobid, job.resource_request)
            except InsufficientResources:
                yield  # the fault: waits in the pass for room to free
                continue
            except InfeasibleRequest as exc:
                job.request.deny(str(exc))
            else:
                self.stamp(job, alloc)
                job.request.success(alloc)
            heapq.heappop(self._queue)
            yield


def mod_main(h, *args):
    WaitingInPass(h, *args).run()
