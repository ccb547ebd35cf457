"""EASY with only the first rule: a job behind the head starts only if it
ends by the head's shadow time, never on the extra nodes the head's
reservation leaves (as flux-core's sched-backfill)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from policy_correct_easy import CountBackfill  # noqa: E402

CLAUSE = "policy.easy-backfill"
POLICY = "easy"


class FirstRuleOnly(CountBackfill):
    def may_start(self, now, limit, shadow):
        return shadow is None or now + limit <= shadow


def mod_main(h, *args):
    FirstRuleOnly(h, *args).run()
