"""OneSlotSweep against the planner's own answers, and where it refuses."""

from __future__ import annotations

import pytest
from flux.resource import ResourcePool
from planner_helpers import (  # noqa: F401 (frozen_time: an autouse fixture)
    NOW,
    frozen_time,
    make_planner,
    ranks_of,
    request,
    run,
)

from flux_sched_base.one_slot_sweep import OneSlotSweep, SweepCannotSay
from flux_sched_base.pool import Pool


def _planner_chain(planner, requests):
    """``(start, rank, cores)`` of each request placed by the planner in
    order, each from the start of the one before (reservations held)."""
    out = []
    floor, include_floor = NOW, False
    for jobid, rr in enumerate(requests, start=100):
        found = planner.earliest(
            jobid, rr, floor=floor, include_floor=include_floor, exclude_held=True
        )
        if found is None:
            out.append(None)
            break
        t, R = found
        (rank,) = ranks_of(R)
        out.append((t, rank, frozenset(R._ranks[rank]["cores"])))
        planner.reserve(jobid, t, planner.window_end(t, rr.duration), R)
        floor, include_floor = t, True
    for jobid in list(planner.reservations):
        planner.drop(jobid, lighten=False)
    return out


def _swept(planner, requests):
    sweep = OneSlotSweep(planner)
    placed = []
    for rr in requests:
        found = sweep.place(rr)
        placed.append(found)
        if found is None:
            break
    cores = sweep.cores()
    seen: dict[int, int] = {}
    out = []
    for found in placed:
        if found is None:
            out.append(None)
            continue
        start, _, rank = found
        out.append((start, rank, cores[rank][seen.get(rank, 0)]))
        seen[rank] = seen.get(rank, 0) + 1
    return sweep, out


def test_a_sweep_places_as_the_planner_on_a_fragmented_machine():
    """Jobs of 1 to 4 cores on a machine left with one to three cores
    free per node: each starts where and when the planner puts it, a
    small one behind a big one at the big one's start on another node, the
    cores the lowest left free."""
    pool, planner = make_planner(nodes=3, cores=4, pool_class=Pool)
    run(planner, pool, 1, slots=1, cores=3, duration=100.0)  # one core left
    run(planner, pool, 2, slots=1, cores=2, duration=300.0)  # two left
    run(planner, pool, 3, slots=1, cores=1, duration=200.0)  # three left
    run(planner, pool, 4, slots=1, cores=1, duration=50.0)  # two left there
    sizes = [(4, 80.0), (1, 500.0), (3, 60.0), (2, 40.0), (4, 10.0), (1, 5.0)]
    requests = [request(pool, slots=1, cores=c, duration=d) for c, d in sizes]
    expected = _planner_chain(planner, requests)
    sweep, got = _swept(planner, requests)
    assert got == expected
    # The first job waits for a whole node: the one job 1 leaves at 100 s.
    assert got[0][:2] == (NOW + 100.0, 0)
    # The one-core job behind it starts then too, on the roomiest node left.
    assert got[1][0] == NOW + 100.0 and got[1][1] != 0


def test_a_kept_sweep_places_jobs_queued_later_as_a_fresh_one():
    pool, planner = make_planner(nodes=2, cores=4, pool_class=Pool)
    run(planner, pool, 1, slots=1, cores=3, duration=100.0)
    run(planner, pool, 2, slots=1, cores=4, duration=30.0)
    requests = [
        request(pool, slots=1, cores=c, duration=d)
        for c, d in [(4, 50.0), (2, 70.0), (3, 20.0), (1, 10.0)]
    ]
    sweep = OneSlotSweep(planner)
    first = [sweep.place(rr) for rr in requests[:2]]
    later = [sweep.place(rr) for rr in requests[2:]]
    _, fresh = _swept(planner, requests)
    assert [p[0] for p in first + later] == [p[0] for p in fresh]
    assert [p[2] for p in first + later] == [p[1] for p in fresh]


def test_a_request_that_never_fits_has_no_start_and_a_refused_one_goes_back():
    pool, planner = make_planner(nodes=2, cores=4, pool_class=Pool)
    run(planner, pool, 1, slots=1, cores=4, duration=0.0)  # never ends
    run(planner, pool, 2, slots=1, cores=4, duration=0.0)
    sweep = OneSlotSweep(planner)
    assert sweep.place(request(pool, slots=1, cores=2, duration=10.0)) is None
    with pytest.raises(SweepCannotSay):  # more cores than any node has
        OneSlotSweep(planner).place(request(pool, slots=1, cores=5, duration=10.0))


def test_cores_the_pool_holds_for_no_running_job_send_the_question_back():
    """Where the pool holds cores no running job names, the plan does not
    stand for the pool: the sweep refuses (the planner asks the allocator
    on its copy there), whether it reads the rank afresh or learns of it
    from a job that left."""
    pool, planner = make_planner(nodes=2, cores=4, pool_class=Pool)
    run(planner, pool, 1, slots=1, cores=4, duration=100.0)
    one = request(pool, slots=1, cores=1, duration=10.0)
    sweep = OneSlotSweep(planner)
    assert sweep.place(one) is not None
    room = sweep.room
    # A final free that returns part of what the job held: the pool keeps
    # the rest, the plan no longer names it.
    R = planner.running[1].R.to_dict()
    (entry,) = R["execution"]["R_lite"]
    rank = int(entry["rank"])
    entry["children"]["core"] = "0-1"
    part = ResourcePool(R)
    pool.free(1, part)
    planner.release(1, part, final=True, now=NOW)
    assert room.odd == set()
    with pytest.raises(SweepCannotSay):
        OneSlotSweep(planner, room).place(one)
    assert room.odd == {rank}
    # Cores allocated behind the planner's back, read by a new index.
    pool, planner = make_planner(nodes=2, cores=4, pool_class=Pool)
    run(planner, pool, 1, slots=1, cores=4, duration=100.0)
    pool.alloc(99, request(pool, slots=1, cores=1))
    with pytest.raises(SweepCannotSay):
        OneSlotSweep(planner).place(one)
