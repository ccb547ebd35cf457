"""robust.no-crash: the module sends SIGKILL to its own process.

Nothing runs after SIGKILL; the kit's worker logs the stack of the os.kill
call on its way through, and the parent names the signal.
"""

import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "robust.no-crash"


class KillSelf(GalleryFifo):
    def schedule(self):
        if self._queue:
            os.kill(os.getpid(), signal.SIGKILL)
        super().schedule()


def mod_main(h, *args):
    KillSelf(h, *args).run()
