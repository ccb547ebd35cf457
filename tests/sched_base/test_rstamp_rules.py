"""starttime and expiration on R: one rule for the plan and the stamp."""

from __future__ import annotations

import math

import pytest

from flux_sched_base.rstamp import NEVER, expiration_for, plan_end, stamp


@pytest.mark.parametrize(
    "start, duration, instance, expected",
    [
        (100.0, 50.0, 0.0, 150.0),  # start + duration
        (100.0, 50.0, 120.0, 120.0),  # bounded by the instance
        (100.0, 50.0, 500.0, 150.0),
        (100.0, 0.0, 500.0, 500.0),  # no duration: the instance's end
        (100.0, 0.0, 0.0, 0.0),  # neither: none
    ],
)
def test_expiration_rule(start, duration, instance, expected):
    assert expiration_for(start, duration, instance) == expected


def test_plan_end_maps_none_to_never():
    assert plan_end(0.0) == NEVER == math.inf
    assert plan_end(42.0) == 42.0


class FakeR:
    def set_starttime(self, t):
        self.starttime = t

    def set_expiration(self, t):
        self.expiration = t


def test_stamp_sets_both_and_returns_the_expiration():
    R = FakeR()
    assert stamp(R, 60.0, 0.0, now=1000.0) == 1060.0
    assert (R.starttime, R.expiration) == (1000.0, 1060.0)
    R = FakeR()
    assert stamp(R, 0.0, 0.0, now=1000.0) == 0.0
    assert (R.starttime, R.expiration) == (1000.0, 0.0)
