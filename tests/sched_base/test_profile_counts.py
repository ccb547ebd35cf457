"""The aggregate usage profile: counts over time and candidate start times."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from flux_sched_base.availability import contains
from flux_sched_base.profile import Profile

INF = math.inf
CAP = (16, 0, 4, 4)  # 4 nodes x 4 cores


def test_running_and_reservations_make_steps():
    p = Profile(CAP)
    p.add(None, 100.0, (8, 0, 2, 2), ranks=[0, 1])
    p.add(100.0, 200.0, (12, 0, 3, 3), ranks=[0, 1, 2])
    steps = [(t, c, n, b) for t, c, _, n, b, _ in p._steps(0.0, None, None)]
    assert steps == [(0.0, 8, 2, 2), (100.0, 12, 3, 3), (200.0, 0, 0, 0)]
    assert p.free_now_upper() == (8, 0, 2, 2)


def test_busy_nodes_are_counted_once_per_rank():
    p = Profile(CAP)
    p.add(None, 100.0, (1, 0, 0, 1), ranks=[0])
    p.add(None, 150.0, (1, 0, 0, 1), ranks=[0])
    p.add(100.0, 300.0, (2, 0, 0, 1), ranks=[0])
    busy = [(t, b) for t, _, _, _, b, _ in p._steps(0.0, None, None)]
    # rank 0 is busy without a gap until 300
    assert busy[0] == (0.0, 1) and busy[-1] == (300.0, 0)
    assert all(b == 1 for t, b in busy if t < 300.0)


def test_remove_restores_an_empty_profile():
    p = Profile(CAP)
    items = [
        (None, 100.0, (4, 0, 1, 1), [0]),
        (50.0, 150.0, (8, 0, 2, 2), [1, 2]),
        (100.0, INF, (4, 0, 1, 1), [0]),
    ]
    for item in items:
        p.add(*item)
    for item in reversed(items):
        p.remove(*item)
    assert len(p) == 0 and p.base == [0, 0, 0, 0] and not p._cover and not p._ends


def test_candidates_are_end_times_where_the_counts_fit():
    p = Profile(CAP)
    p.add(None, 100.0, (16, 0, 4, 4), ranks=[0, 1, 2, 3])  # full until 100
    p.add(200.0, 300.0, (8, 0, 2, 2), ranks=[0, 1])
    need = (16, 0, 4, 4)
    assert list(p.candidates(0.0, 50.0, need)) == [100.0, 300.0]
    # A 150 s job would overlap the reservation at 200: only after it.
    assert list(p.candidates(0.0, 150.0, need)) == [300.0]
    # Half the machine fits beside the reservation.
    assert list(p.candidates(0.0, 500.0, (8, 0, 2, 2))) == [100.0, 300.0]
    assert list(p.candidates(0.0, 50.0, need, limit=100.0)) == []


def test_candidates_leave_out_own_and_minus():
    p = Profile(CAP)
    p.add(None, 100.0, (16, 0, 4, 4), ranks=[0, 1, 2, 3])
    p.add(100.0, 200.0, (16, 0, 4, 4), ranks=[0, 1, 2, 3])
    need = (16, 0, 4, 4)
    assert list(p.candidates(0.0, 50.0, need)) == [200.0]
    own = (100.0, 200.0, (16, 0, 4, 4, 4)[:4])
    assert list(p.candidates(0.0, 50.0, need, own=own)) == [100.0, 200.0]
    held = Profile(CAP)
    held.add(100.0, 200.0, (16, 0, 4, 4))
    assert list(p.candidates(0.0, 50.0, need, minus=held)) == [100.0, 200.0]


def test_own_reservation_is_room_only_while_it_lasts():
    p = Profile(CAP)
    p.add(None, 100.0, (16, 0, 4, 4), ranks=[0, 1, 2, 3])
    own = (100.0, 200.0, (16, 0, 4, 4))
    p.add(*own, ranks=[0, 1, 2, 3])
    p.add(200.0, 300.0, (16, 0, 4, 4), ranks=[0, 1, 2, 3])
    need = (16, 0, 4, 4)
    # From 100 the job's own reservation leaves the machine to it, but
    # the one that follows at 200 does not: a 150 s window fits only
    # after 300, a 100 s one at 100 too.
    assert list(p.candidates(0.0, 150.0, need, own=own)) == [300.0]
    assert list(p.candidates(0.0, 100.0, need, own=own)) == [100.0, 300.0]


def test_horizon_shortens_windows():
    p = Profile(CAP)
    p.add(None, 100.0, (16, 0, 4, 4), ranks=[0, 1, 2, 3])
    p.add(300.0, 400.0, (16, 0, 4, 4), ranks=[0, 1, 2, 3])
    need = (16, 0, 4, 4)
    # No end: only after the reservation...
    assert list(p.candidates(0.0, 0.0, need)) == [400.0]
    # ...unless the instance ends before it.
    assert list(p.candidates(0.0, 0.0, need, horizon=300.0)) == [100.0, 400.0]


def test_fits_from_uses_the_window_maximum():
    p = Profile(CAP)
    p.add(None, 100.0, (8, 0, 2, 2), ranks=[0, 1])
    p.add(150.0, 200.0, (16, 0, 4, 4), ranks=[0, 1, 2, 3])
    assert p.fits_from(0.0, 100.0, (8, 0, 2, 2))
    assert not p.fits_from(0.0, 160.0, (4, 0, 1, 1))
    assert not p.fits_from(0.0, 0.0, (4, 0, 1, 1))
    assert p.fits_from(0.0, 150.0, (8, 0, 2, 2))


_starts = st.sampled_from([None, None, 10.0, 20.0])
_ends = st.sampled_from([15.0, 30.0, 30.0, INF])
_items = st.tuples(_starts, _ends, st.sets(st.integers(0, 3), min_size=1, max_size=2))


def _add_or_remove(p: Profile, held: list, remove: bool, item: tuple) -> None:
    """Remove *item* from *p* if asked and *held* has it; add it if not asked."""
    if remove and item in held:
        held.remove(item)
        p.remove(*item)
    elif not remove:
        held.append(item)
        p.add(*item)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.booleans(), _items), max_size=30))
def test_any_adds_and_removes_equal_the_remaining_items_added_afresh(operations):
    # Jobs sharing ranks with equal intervals, nested or disjoint ones: the
    # profile kept up to date equals one built from what is left.
    p = Profile(CAP)
    held: list = []
    for remove, (start, end, ranks) in operations:
        if start is not None and end <= start:
            continue
        item = (start, end, (len(ranks), 0, 0, len(ranks)), sorted(ranks))
        _add_or_remove(p, held, remove, item)
        fresh = Profile(CAP)
        for other in held:
            fresh.add(*other)
        assert list(p._steps(0.0, None, None)) == list(fresh._steps(0.0, None, None))
        # Busy nodes, counted by hand: ranks some item holds at that time.
        for t in (0.0, 12.0, 17.0, 25.0, 35.0):
            busy = {
                rank
                for start, end, _, ranks in held
                if (start is None or start <= t) and t < end
                for rank in ranks
            }
            assert p._usage_at([t])[0][3] == len(busy)


def test_a_later_candidate_still_checks_the_step_after_the_last_window():
    p = Profile(CAP)
    p.add(None, 10.0, (1, 0, 0, 1), ranks=[0])
    p.add(None, 15.0, (1, 0, 0, 1), ranks=[1])
    p.add(20.0, 30.0, (4, 0, 4, 4), ranks=[0, 1, 2, 3])
    # 15 is an end, but its window [15, 25) meets the reservation at 20.
    assert list(p.candidates(0.0, 10.0, (2, 0, 0, 2))) == [0.0, 10.0, 30.0]


def _candidates_by_steps(p, floor, duration, need, include_floor, limit, minus, own):
    """Every candidate checked over its whole window, read from ``_steps``."""
    steps = list(p._steps(floor, minus, own))
    out = []
    for index, (t, *_, is_end) in enumerate(steps):
        if t >= limit:
            break
        if not is_end or (index == 0 and not include_floor):
            continue
        end = t + duration if duration > 0 else INF
        window = [s for s in steps[index:] if s[0] < end]
        if all(s[1 + k] + need[k] <= p.capacity[k] for s in window for k in range(4)):
            out.append(t)
    return out


_times = st.sampled_from([0.0, 5.0, 10.0, 15.0, 20.0, 30.0, 45.0])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.booleans(), _items), max_size=24),
    st.sampled_from([48, 3]),
    st.data(),
)
def test_fits_from_after_changes_reads_the_last_table_and_the_changes_since(
    operations, kept, data
):
    # After a change, fits_from reads the usage at a few times from the
    # last table plus the changes since (while there are at most *kept*),
    # and a new table is the last one patched with them; each answer must
    # equal a full check of the window read from _steps.
    p = Profile(CAP)
    p.BUMPS_KEPT = kept
    held: list = []
    for remove, (start, end, ranks) in operations:
        if data.draw(st.booleans()):
            p._table()  # as a query would have
        if start is not None and end <= start:
            continue
        full = len(ranks) if end == INF or start is None else 0
        item = (start, end, (len(ranks) * 2 + 4 * bool(full), 0, full, len(ranks)))
        _add_or_remove(p, held, remove, (*item, sorted(ranks)))
        floor = data.draw(_times)
        duration = data.draw(st.sampled_from([0.0, 5.0, 10.0, 25.0]))
        cores, nodes, busy = data.draw(
            st.tuples(st.integers(0, 8), st.integers(0, 2), st.integers(0, 3))
        )
        request = (cores, 0, nodes, busy)
        alone = _candidates_by_steps(p, floor, duration, request, True, INF, None, None)
        assert p.fits_from(floor, duration, request) == (floor in alone)
        # A table patched from the last one (with the changes since) reads
        # the same candidates as the steps.
        expected = _candidates_by_steps(
            p, 0.0, duration, request, True, INF, None, None
        )
        assert list(p.candidates(0.0, duration, request)) == expected


@settings(max_examples=300, deadline=None)
@given(
    st.lists(_items, min_size=1, max_size=12),
    st.data(),
    _times,
    st.sampled_from([0.0, 5.0, 10.0, 25.0]),
    st.tuples(st.integers(0, 8), st.integers(0, 2), st.integers(0, 3)),
    st.booleans(),
    st.sampled_from([INF, 12.0, 30.0]),
)
def test_candidates_equal_a_full_check_of_every_window(
    items, data, floor, duration, need, include_floor, limit
):
    # Reservations held out (minus) and the job's own one (own) change
    # the usage read; a later candidate skips windows known to fit.
    p = Profile(CAP)
    placed = []
    for start, end, ranks in items:
        if start is not None and end <= start:
            continue
        full = len(ranks) if end == INF or start is None else 0
        vec = (len(ranks) * 2 + (4 if full else 0), 0, full, len(ranks))
        p.add(start, end, vec, ranks=sorted(ranks))
        placed.append((start, end, vec))
    reservations = [item for item in placed if item[0] is not None]
    minus = own = None
    if placed and data.draw(st.booleans()):
        minus = Profile(CAP)
        for start, end, vec in data.draw(st.lists(st.sampled_from(placed))):
            minus.add(start, end, vec)
    if reservations and data.draw(st.booleans()):
        own = data.draw(st.sampled_from(reservations))
    cores, nodes, busy = need
    request = (cores, 0, nodes, busy)
    expected = _candidates_by_steps(
        p, floor, duration, request, include_floor, limit, minus, own
    )

    def candidates(**more):
        return list(
            p.candidates(
                floor,
                duration,
                request,
                include_floor=include_floor,
                limit=limit,
                minus=minus,
                own=own,
                **more,
            )
        )

    assert candidates() == expected
    # Both ways of leaving *minus* out: segment by segment, and its deltas
    # read at every breakpoint.
    p.SEGMENTS_AT_MOST = -1
    assert candidates() == expected
    del p.SEGMENTS_AT_MOST
    # Restricted to some stretches of start times: the same candidates,
    # those outside dropped (the steps between stretches are skipped).
    bounds = sorted(data.draw(st.lists(_times, max_size=6)))
    within = [(u, v) for u, v in zip(bounds[::2], bounds[1::2], strict=False)]
    assert candidates(within=within) == [t for t in expected if contains(within, t)]
    # The prefix-maximum answer for one window from floor agrees too, and
    # with the job's own reservation left out.
    alone = _candidates_by_steps(p, floor, duration, request, True, INF, None, None)
    assert p.fits_from(floor, duration, request) == (floor in alone)
    mine = _candidates_by_steps(p, floor, duration, request, True, INF, None, own)
    assert p.fits_from(floor, duration, request, own=own) == (floor in mine)
    # Both ways: the usage at each rise in the window, and prefix maxima.
    p.POINTS_AT_MOST = -1
    assert p.fits_from(floor, duration, request) == (floor in alone)
    assert p.fits_from(floor, duration, request, own=own) == (floor in mine)


def test_fits_from_reads_the_end_of_the_jobs_own_reservation():
    # The job's own reservation on nodes 0-1 ends at 15 s; another one
    # keeps those nodes busy until 30 s.  Left out, the own one gives room
    # only until 15 s: three idle nodes are there at 10 s, not at 15 s.
    p = Profile(CAP)
    own = (10.0, 15.0, (4, 0, 0, 2))
    p.add(*own, ranks=[0, 1])
    p.add(10.0, 30.0, (2, 0, 0, 2), ranks=[0, 1])
    need = (0, 0, 0, 3)
    assert p.fits_from(10.0, 5.0, need, own=own)
    assert not p.fits_from(10.0, 10.0, need, own=own)
    assert not p.fits_from(10.0, 5.0, need)
