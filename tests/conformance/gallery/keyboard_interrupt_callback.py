"""robust.no-crash: schedule() raises KeyboardInterrupt once a job has to wait.

No Ctrl-C raised it (the kit's worker ignores SIGINT): it is the module's
own exception, and in a broker it ends mod_main as any other would.  The
evidence is its traceback, down to this file's line.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "robust.no-crash"


class Interrupter(GalleryFifo):
    def schedule(self):
        super().schedule()
        if self._queue:
            raise KeyboardInterrupt


def mod_main(h, *args):
    Interrupter(h, *args).run()
