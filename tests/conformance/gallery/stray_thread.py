"""robust.no-stray-threads: mod_main starts a helper thread that never ends.

The thread is not a daemon: under flux-core 0.88, which runs a Python
module in a process of its own, that process waits for it at exit and
never ends after the module is removed.  The kit names the thread, shows
its stack and recycles its worker process.
"""

import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "robust.no-stray-threads"


def _poll_forever():
    while True:
        time.sleep(0.05)  # "refresh the queue statistics"


def mod_main(h, *args):
    threading.Thread(target=_poll_forever, name="queue-stats").start()
    GalleryFifo(h, *args).run()
