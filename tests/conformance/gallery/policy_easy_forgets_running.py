"""EASY that learns nothing from hello but the allocations: after a
restart it takes the jobs that were running for free nodes, so the head's
reservation is placed at the wrong time and later jobs start around it."""

import os
import sys

from flux.scheduler import Scheduler

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from policy_correct_easy import CountBackfill  # noqa: E402

CLAUSE = "policy.easy-head-reservation"
POLICY = "easy"
#: Only where the scheduler is restarted; with the head's reservation
#: wrong, it also misses starts the textbook makes.
SHOWN_BY = ["restarts"]
ALSO = ["policy.easy-backfill"]


class ForgetsRunning(CountBackfill):
    hello = Scheduler.hello


def mod_main(h, *args):
    ForgetsRunning(h, *args).run()
