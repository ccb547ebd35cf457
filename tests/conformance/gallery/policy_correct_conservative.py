"""The gallery's correct conservative backfilling: every policy clause passes
(it fails the protocol clauses it does not handle: see the README).

Every queued job holds a reservation, kept from pass to pass and
compressed in queue order when jobs end early (see
:class:`policy_correct_easy.CountBackfill`).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from policy_correct_easy import CountBackfill  # noqa: E402

CLAUSE = None
POLICY = "conservative"


class Conservative(CountBackfill):
    depth = None


def mod_main(h, *args):
    Conservative(h, *args).run()
