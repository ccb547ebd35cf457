"""Gallery (resources.shrink): ignores shrink updates (removed ranks stay in its
pool).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "resources.shrink"


class IgnoresShrink(GalleryFifo):
    """Ignores shrink updates (removed ranks stay in its pool)."""

    def _apply_resource_update(self, data):
        data = {key: value for key, value in data.items() if key != "shrink"}
        super()._apply_resource_update(data)


def mod_main(h, *args):
    IgnoresShrink(h, *args).run()
