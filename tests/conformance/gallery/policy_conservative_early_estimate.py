"""Conservative backfilling that announces each t_estimate one minute
before the reservation (never in the past): jobs start correctly, but
later than announced."""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from policy_correct_easy import CountBackfill  # noqa: E402

CLAUSE = "policy.conservative-t-estimate"
POLICY = "conservative"
#: An estimate that comes too early also lies in the past while the job
#: waits for its real start.
ALSO = ["policy.t-estimate-current"]


class EarlyEstimate(CountBackfill):
    depth = None

    def estimate(self, start):
        return max(start - 60.0, time.time() + 1.0)


def mod_main(h, *args):
    EarlyEstimate(h, *args).run()
