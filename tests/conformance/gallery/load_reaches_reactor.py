"""Gallery (load.reaches-reactor): mod_main raises before entering the reactor."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "load.reaches-reactor"


def mod_main(h, *args):
    GalleryFifo(h, *args)
    raise RuntimeError("site configuration not found")
