"""Module arguments declared as Option objects, validated at load time."""

from __future__ import annotations

import math

import pytest

from flux_sched_base.args import (
    UNLIMITED,
    Option,
    choice,
    collect,
    consume,
    count_or_unlimited,
    format_value,
)

DEPTH = Option("reservation-depth", "depth", 64, count_or_unlimited(minimum=1), "help")
MODE = Option("mode-x", "mode", "a", choice("a", "b"), "pick one")


def test_consume_takes_known_arguments_and_leaves_the_rest():
    pending = ["queue-depth=8", "reservation-depth=3", "other=1"]
    values = consume(pending, [DEPTH, MODE])
    assert values == {"depth": 3, "mode": "a"}
    assert pending == ["queue-depth=8", "other=1"]


def test_unlimited_is_infinity_and_formats_back():
    values = consume(["reservation-depth=unlimited"], [DEPTH])
    assert values["depth"] == UNLIMITED == math.inf
    assert format_value(values["depth"]) == "unlimited"
    assert format_value(7) == "7"


def test_last_occurrence_wins():
    assert consume(["reservation-depth=2", "reservation-depth=5"], [DEPTH]) == {
        "depth": 5
    }


@pytest.mark.parametrize(
    "arg, text",
    [
        ("reservation-depth=0", "integer >= 1 or 'unlimited'"),
        ("reservation-depth=x", "integer >= 1 or 'unlimited'"),
        ("reservation-depth=", "integer >= 1 or 'unlimited'"),
        ("reservation-depth", "needs a value"),
        ("mode-x=c", "expected one of a, b"),
    ],
)
def test_errors_name_the_argument_and_the_accepted_values(arg, text):
    with pytest.raises(ValueError) as info:
        consume([arg], [DEPTH, MODE])
    assert arg.split("=")[0] in str(info.value)
    assert text in str(info.value)


def test_collect_lets_subclasses_override_options():
    class Base:
        options = (DEPTH, MODE)

    class Leaf(Base):
        options = (Option("reservation-depth", "depth", 1, count_or_unlimited(), "x"),)

    found = {opt.name: opt for opt in collect(Leaf.__mro__)}
    assert set(found) == {"reservation-depth", "mode-x"}
    assert found["reservation-depth"].default == 1
