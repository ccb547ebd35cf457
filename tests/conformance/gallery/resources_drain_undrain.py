"""Gallery (resources.drain-undrain): ignores undrain: a rank that went down never
comes back.
"""

import os
import sys

from flux.idset import IDset

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "resources.drain-undrain"


class NeverUndrains(GalleryFifo):
    """Ignores undrain: a rank that went down never comes back."""

    def __init__(self, h, *args):
        super().__init__(h, *args)
        self._gone = set()

    def _apply_resource_update(self, data):
        if data.get("down") not in (None, "all"):
            self._gone.update(IDset(data["down"]))
        super()._apply_resource_update(data)
        if self._gone:
            self.resources.mark_down(str(IDset(sorted(self._gone))))


def mod_main(h, *args):
    NeverUndrains(h, *args).run()
