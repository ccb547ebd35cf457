"""The kept earliest room that lets a compression pass skip most holders.

``ReservationScheduler._may_have_room`` keeps, per pass and request, the
earliest room on the ranks lightened over the widest span of lightenings
asked since the last one, and narrows a holder's search to its own rank
(or to nothing) when that room comes no earlier than its reservation.
Here it runs against a plan of one number per rank (the earliest room
there), which placements only push later and lightenings pull earlier,
and must never leave out a rank that has room before the holder's start.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from flux_sched_base.reservation import ReservationScheduler

RANKS = range(6)


class _Plan:
    """The planner as ``_may_have_room`` reads it."""

    now = 0.0

    def __init__(self, rooms):
        self.room = dict(zip(RANKS, rooms, strict=True))  # rank -> earliest room there
        self.log: list[frozenset] = []  # ranks freed by each lightening

    @property
    def lighten_epoch(self) -> int:
        return len(self.log)

    def lightened_since(self, epoch: int) -> set[int]:
        return set().union(*self.log[epoch:])

    def first_room(self, request, ranks, floor):
        return min((self.room[r] for r in ranks), default=math.inf)


def _scheduler(plan, buckets):
    return SimpleNamespace(
        _bucket_of=buckets, _room_from={}, planner=plan, check_reuse=False
    )


_steps = st.lists(
    st.one_of(
        # a holder asks: (job, its reservation's rank and start, how far back it last looked)
        st.tuples(
            st.just("ask"),
            st.integers(0, 3),
            st.sampled_from(RANKS),
            st.integers(1, 60),
            st.integers(0, 8),
        ),
        # a reservation placed on a rank: its room comes later
        st.tuples(st.just("place"), st.sampled_from(RANKS), st.integers(1, 30)),
        # a rank lightened: its room comes earlier, a new span begins
        st.tuples(st.just("lighten"), st.sampled_from(RANKS), st.integers(0, 60)),
        st.tuples(st.just("new pass")),
    ),
    max_size=60,
)


@settings(max_examples=400, derandomize=True, deadline=None)
@given(st.lists(st.integers(0, 60), min_size=6, max_size=6), _steps)
def test_no_rank_with_room_is_left_out(rooms, steps):
    plan = _Plan(rooms)
    plan.log.append(frozenset(RANKS))
    # Jobs 0 and 1 are one request, 2 and 3 another.
    buckets = {j: ("slot", j // 2) for j in range(4)}
    sched = _scheduler(plan, buckets)
    for step in steps:
        if step[0] == "new pass":
            sched._room_from = {}
        elif step[0] == "place":
            plan.room[step[1]] += step[2]
        elif step[0] == "lighten":
            plan.room[step[1]] = min(plan.room[step[1]], step[2])
            plan.log.append(frozenset([step[1]]))
        else:
            _, jobid, own_rank, start, back = step
            epoch = plan.lighten_epoch
            checked = max(0, epoch - back)
            if checked == epoch:
                continue  # nothing lightened since it looked: not asked
            lightened = plan.lightened_since(checked)
            job = SimpleNamespace(jobid=jobid, resource_request=None)
            res = SimpleNamespace(start=start, ranks={own_rank: None})
            kept = ReservationScheduler._may_have_room(
                sched, job, res, (checked, epoch), lightened
            )
            roomy = {r for r in lightened - {own_rank} if plan.room[r] < start}
            assert roomy <= kept <= lightened
            assert lightened & {own_rank} <= kept


def test_a_wider_span_is_not_answered_from_a_narrower_one():
    plan = _Plan([50, 10, 50, 50, 50, 50])
    plan.log += [frozenset([1]), frozenset([2])]  # epochs 1 and 2
    sched = _scheduler(plan, {0: ("slot", 0), 1: ("slot", 0)})
    own = {5: None}
    narrow = ReservationScheduler._may_have_room(
        sched,
        SimpleNamespace(jobid=0, resource_request=None),
        SimpleNamespace(start=40, ranks=own),
        (2, 3),
        {2},
    )
    assert narrow == set()  # rank 2 has room only at 50
    wide = ReservationScheduler._may_have_room(
        sched,
        SimpleNamespace(jobid=1, resource_request=None),
        SimpleNamespace(start=40, ranks=own),
        (1, 3),
        {1, 2},
    )
    assert 1 in wide  # rank 1 has room at 10, before 40
