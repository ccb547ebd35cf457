"""Declared conservative, but only the head of the queue holds a
reservation: EASY backfilling."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from policy_correct_easy import CountBackfill  # noqa: E402

CLAUSE = "policy.conservative-backfill"
POLICY = "conservative"


class ActuallyEasy(CountBackfill):
    depth = 1


def mod_main(h, *args):
    ActuallyEasy(h, *args).run()
