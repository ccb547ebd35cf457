"""The broker's reused JSON encoder says what the stock one says."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mock_broker.flux_substitute.message import COMPACT_JSON, compact_json

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text()
    | st.sampled_from(["ƒ", "\u2028", '"', "\\", "\x00"])
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(
            st.text(max_size=4) | st.integers() | st.booleans() | st.none(),
            inner,
            max_size=4,
        )
    ),
    max_leaves=20,
)


def _outcome(encode, value):
    try:
        return ("text", encode(value))
    except (TypeError, ValueError) as exc:
        return (type(exc).__name__, str(exc))


@settings(max_examples=400, deadline=None)
@given(_VALUES)
def test_same_text_or_same_error_as_the_stock_encoder(value):
    assert _outcome(compact_json, value) == _outcome(COMPACT_JSON.encode, value)


def test_compact_and_ascii_and_no_nan():
    assert compact_json({"a": [1, 2.5], "b": "ƒ"}) == '{"a":[1,2.5],"b":"\\u0192"}'
    for bad in (math.nan, math.inf, [{"x": -math.inf}]):
        with pytest.raises(ValueError, match="Out of range float"):
            compact_json(bad)
    with pytest.raises(TypeError, match="set is not JSON serializable"):
        compact_json({"x": {1, 2}})


def test_a_failed_call_leaves_nothing_behind():
    # A reused encoder that kept circular-reference markers from a failed
    # call would refuse the same containers, unchanged, ever after.
    inner = {"ok": [1, 2]}
    outer = {"inner": inner, "bad": math.nan}
    with pytest.raises(ValueError):
        compact_json(outer)
    outer["bad"] = 0
    assert json.loads(compact_json(outer)) == {"inner": {"ok": [1, 2]}, "bad": 0}


def test_circular_and_too_deep_values_fail_as_with_the_stock_encoder():
    loop: list = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular reference detected"):
        compact_json(loop)
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(RecursionError):
        compact_json(deep)
