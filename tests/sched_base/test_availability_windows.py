"""Per-rank availability windows of a request's start times."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from flux_sched_base.availability import (
    Shape,
    contains,
    count_starts,
    first_start,
    free_stretches,
    intersect,
    rank_starts,
    shape_of,
    valid_starts,
)

INF = math.inf


def test_rank_starts_follow_free_cores():
    events = [(-INF, 4, 0), (100.0, -4, 0), (300.0, 2, 0), (400.0, -2, 0)]
    whole = Shape(4, 0, 1)
    # 4 cores free from 100 to 300 and after 400; a 150 s window fits in the
    # first stretch if it starts by 150, and anywhere after 400.
    assert rank_starts(events, 4, 0, whole, 150.0, 0.0, INF) == [
        (100.0, 150.0),
        (400.0, INF),
    ]
    half = Shape(2, 0, 1)
    assert rank_starts(events, 4, 0, half, 150.0, 0.0, INF) == [(100.0, INF)]
    # No end: only the last stretch, which never ends.
    assert rank_starts(events, 4, 0, whole, 0.0, 0.0, INF) == [(400.0, INF)]
    assert rank_starts(events, 4, 0, whole, 150.0, 0.0, 120.0) == [(100.0, 150.0)]


def test_exclusive_needs_every_core():
    events = [(50.0, 1, 0), (60.0, -1, 0)]
    assert rank_starts(events, 4, 0, Shape(None, 0, 1), 10.0, 0.0, INF) == [
        (0.0, 40.0),
        (60.0, INF),
    ]


def test_count_starts_needs_enough_ranks_at_once():
    per_rank = [[(0.0, 10.0), (50.0, INF)], [(5.0, 60.0)], [(55.0, 70.0)]]
    assert count_starts(per_rank, 2) == [(5.0, 10.0), (50.0, 70.0)]
    assert count_starts(per_rank, 3) == [(55.0, 60.0)]
    assert count_starts(per_rank, 4) == []
    intervals = count_starts(per_rank, 2)
    assert contains(intervals, 5.0) and contains(intervals, 60.0)
    assert not contains(intervals, 20.0) and not contains(intervals, 71.0)


class Request:
    def __init__(self, nnodes, nslots, slot_size, gpu_per_slot=0, exclusive=False):
        self.nnodes, self.nslots = nnodes, nslots
        self.slot_size, self.gpu_per_slot = slot_size, gpu_per_slot
        self.exclusive = exclusive


def test_shape_of_requests():
    cores = {0: 8, 1: 8}
    gpus = {0: 2, 1: 2}
    s = shape_of(Request(2, 4, 2, 1), cores, gpus)
    assert (s.cores, s.gpus, s.nodes) == (4, 2, 2)
    s = shape_of(Request(1, 1, 1, exclusive=True), cores, gpus)
    assert (s.cores, s.nodes) == (None, 1)
    # 9 slots of 2 cores: a node holds 4, so at least 3 ranks.
    s = shape_of(Request(0, 9, 2), cores, gpus)
    assert (s.cores, s.gpus, s.nodes) == (2, 0, 3)
    # GPUs limit slots per node to 2.
    s = shape_of(Request(0, 5, 1, 1), cores, gpus)
    assert s.nodes == 3
    assert shape_of(object(), cores, gpus) is None


def test_intersect_keeps_the_times_in_both():
    a = [(0.0, 10.0), (20.0, 30.0), (40.0, INF)]
    b = [(5.0, 25.0), (30.0, 30.0), (35.0, 45.0)]
    assert intersect(a, b) == [(5.0, 10.0), (20.0, 25.0), (30.0, 30.0), (40.0, 45.0)]
    assert intersect(a, []) == [] and intersect(b, a) == intersect(a, b)


_item = st.tuples(
    st.integers(-1, 10),  # start x 50 s (-1: running, from -inf)
    st.integers(1, 8),  # length x 50 s (8: never ends)
    st.integers(1, 4),  # cores
)


@given(
    items=st.lists(_item, max_size=6),
    need=st.integers(1, 4),
    duration=st.sampled_from([0.0, 25.0, 50.0, 120.0, 400.0]),
    floor=st.integers(0, 12),
    limit=st.integers(0, 14),
)
def test_first_start_is_the_earliest_valid_start(items, need, duration, floor, limit):
    """The earliest start the stretches hold is the first of the valid
    starts, and below a limit exactly when some valid start is."""
    events = []
    for start, length, cores in items:
        t = -INF if start < 0 else 50.0 * start
        events.append((t, cores, 0))
        if length < 8:
            events.append((max(t, 0.0) + 50.0 * length, -cores, 0))
    stretches = free_stretches(events, 4, 0, Shape(need, 0, 1))
    first = first_start(stretches, duration, 50.0 * floor)
    every = valid_starts(stretches, duration, 50.0 * floor, INF)
    assert first == (every[0][0] if every else INF)
    below = valid_starts(stretches, duration, 50.0 * floor, 50.0 * limit)
    assert bool(below) == (first < 50.0 * limit)
