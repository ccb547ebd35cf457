"""EASY that backfills whatever fits now: the head gets its t_estimate,
but later jobs need not fit around its reservation."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from policy_correct_easy import CountBackfill  # noqa: E402

CLAUSE = "policy.easy-head-reservation"
POLICY = "easy"


class FitsNow(CountBackfill):
    respect_reservations = False


def mod_main(h, *args):
    FitsNow(h, *args).run()
