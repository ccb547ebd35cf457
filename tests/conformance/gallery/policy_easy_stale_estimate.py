"""EASY that never takes a t_estimate back: when an urgent job overtakes
the blocked head and takes its reservation, the old head keeps the time it
was given, which passes while it waits."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from policy_correct_easy import CountBackfill  # noqa: E402

CLAUSE = "policy.t-estimate-current"
POLICY = "easy"
#: Only where later jobs overtake queued ones.
SHOWN_BY = ["urgent"]


class StaleEstimate(CountBackfill):
    def announce(self, job, t_estimate):
        if t_estimate is not None:
            super().announce(job, t_estimate)


def mod_main(h, *args):
    StaleEstimate(h, *args).run()
