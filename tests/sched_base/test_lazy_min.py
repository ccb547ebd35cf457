"""LazyMin: the least of a changing set, against a sorted list."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from flux_sched_base.lazy_min import LazyMin

_ops = st.lists(
    st.tuples(st.sampled_from(["add", "remove", "clear"]), st.integers(0, 40)),
    max_size=400,
)


@settings(max_examples=300, derandomize=True, deadline=None)
@given(_ops)
def test_least_is_the_least_live_value(ops):
    bag, model = LazyMin(), set()
    for op, value in ops:
        entry = (value % 7, value)  # ties on the first field, as (cores, jobid)
        if op == "add" and entry not in model:
            bag.add(entry)
            model.add(entry)
        elif op == "remove" and entry in model:
            bag.remove(entry)
            model.discard(entry)
        elif op == "clear" and value == 0:
            bag.clear()
            model.clear()
        assert bag.least() == (min(model) if model else None)
        assert len(bag) == len(model)


def test_removed_entries_do_not_pile_up():
    bag = LazyMin()
    bag.add((-1, -1))  # at the top throughout: nothing is popped lazily
    for i in range(10_000):
        bag.add((i, i))
        bag.remove((i, i))
    assert len(bag) == 1
    assert len(bag._heap) <= 2 * len(bag) + 64
    assert bag.least() == (-1, -1)
