"""Gallery (hello.partial-ok): hello without partial-ok."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "hello.partial-ok"


class NoPartialOk(GalleryFifo):
    """Hello without partial-ok."""

    hello_partial_ok = False


def mod_main(h, *args):
    NoPartialOk(h, *args).run()
