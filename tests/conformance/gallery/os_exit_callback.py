"""robust.no-crash: os._exit(3) in the sched.cancel callback.

The worker process dies at once, without unwinding; the kit names the exit
status and restarts a worker for the next probe.  Probes that never cancel
a job are unaffected.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "robust.no-crash"


class ExitOnCancel(GalleryFifo):
    def cancel(self, jobid):
        os._exit(3)


def mod_main(h, *args):
    ExitOnCancel(h, *args).run()
