"""Gallery (ready.mode): sched-ready announces limited mode with limit 0."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "ready.mode"


class ReadyLimitZero(GalleryFifo):
    """Sched-ready announces limited mode with limit 0."""

    def _sched_ready(self):
        f = self.handle.rpc("job-manager.sched-ready", {"mode": "limited", "limit": 0})
        try:
            f.get()
        except OSError as exc:
            self.log.error(f"sched-ready failed: {exc}")


def mod_main(h, *args):
    ReadyLimitZero(h, *args).run()
