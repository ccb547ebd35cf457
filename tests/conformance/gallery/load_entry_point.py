"""Gallery (load.entry-point): no entry point.

The module names its entry function ``main`` instead of ``mod_main`` and
imports the gallery base as a module, so flux module load finds neither
``mod_main`` nor a scheduler class in it.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _base  # noqa: E402

CLAUSE = "load.entry-point"


def main(h, *args):
    """Misnamed: flux module load looks for ``mod_main``."""
    _base.GalleryFifo(h, *args).run()
