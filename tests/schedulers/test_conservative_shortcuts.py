"""Unlimited conservative: the pass's shortcuts change nothing it decides.

A holder is not searched for when too few nodes are free before its start
or the plan has got lighter nowhere before its reservation's end since its
last turn (``Lightening``), and a holder that is searched for keeps its
reservation held while it looks for an earlier start
(``CountedPlanning._keeps``).  All of it must be invisible: the same workload, with passes
cut short by arrivals in the middle, run once as shipped and once with
every holder searched for afresh (released first, as the definition
reads), must send the same estimates and start every job at the same time.
"""

from __future__ import annotations

import math
from types import SimpleNamespace
from unittest import mock

from conftest import estimate_history, start_broker, whole_nodes
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flux_sched_base import compression, counted
from flux_sched_base.counts import NodeProfile
from flux_sched_base.scheduler import PlanningScheduler
from mock_broker.runtime.broker import MockBroker

#: (nodes, limit in tens of seconds, fraction of the limit it runs,
#:  urgency, arrival in seconds, reactor steps before it arrives)
jobs = st.lists(
    st.tuples(
        st.integers(1, 4),
        st.integers(1, 12),
        st.sampled_from([0.2, 0.5, 1.0]),
        st.sampled_from([16, 16, 16, 24]),
        st.integers(0, 60),
        st.integers(0, 6),
    ),
    min_size=2,
    max_size=14,
)


def run(workload):
    b = start_broker("conservative")
    ids = []
    epoch = b.clock.epoch
    for nodes, tens, fraction, urgency, arrival, steps in sorted(
        workload, key=lambda j: j[4]
    ):
        if epoch + arrival > b.now:
            b.run_until(epoch + arrival)
        # Let the pass in progress (if any) take a few steps, then arrive
        # in the middle of it: the job-manager's alloc cuts the pass short.
        with b.clock.active():
            for _ in range(steps):
                if not b._step():
                    break
        ids.append(
            b.jobs.submit(
                whole_nodes(nodes, 10.0 * tens),
                runtime=10.0 * tens * fraction,
                urgency=urgency,
            )
        )
    b.run()
    starts = {j: b.jobs.job(j).t_run for j in ids}
    estimates = estimate_history(b)
    b.observer.assert_clean()
    return starts, estimates


@settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(jobs)
def test_shortcuts_decide_what_a_full_search_decides(workload):
    # Every turn yields once in both runs (a kept holder yields only now and
    # then as shipped), so an arrival after N steps cuts both passes at the
    # same job.
    with mock.patch.object(PlanningScheduler, "CHEAP_YIELD_EVERY", 1):
        shipped = run(workload)
        with mock.patch.object(
            counted.CountedPlanning, "_keeps", lambda *a: (False, None)
        ):
            full = run(workload)
    assert shipped == full


def test_a_pass_cut_short_passes_on_what_it_moved():
    # An early end lets the head start; an arrival cuts the pass before the
    # third holder's turn.  The next pass must still move it into the room
    # the head left (it started at 10 instead of holding [100, 200)).
    b = start_broker("conservative")
    b.jobs.submit(whole_nodes(4, 100), runtime=10)
    b.run_until_quiet()
    head = b.jobs.submit(whole_nodes(4, 100), runtime=100)
    second = b.jobs.submit(whole_nodes(2, 50), runtime=50)
    third = b.jobs.submit(whole_nodes(2, 100), runtime=100)
    b.run_until_quiet()
    t0 = b.clock.epoch
    first = {j: v[-1][1] for j, v in estimate_history(b).items()}
    assert first == {head: t0 + 100, second: t0 + 200, third: t0 + 200}
    # The arrival comes as the second holder's turn begins: its alloc
    # request reaches the scheduler when that turn yields.
    arrivals = []
    turn = compression.Lightening.turn

    def turn_and_arrive(light, jobid):
        turn(light, jobid)
        if jobid == second and not arrivals:
            arrivals.append(b.jobs.submit(whole_nodes(1, 10), runtime=10))

    aborted = b.stats()["passes_aborted"]
    with mock.patch.object(compression.Lightening, "turn", turn_and_arrive):
        b.run_until(t0 + 10)
        with b.clock.active():
            while not arrivals:
                assert b._step(), "the pass did not reach the second holder"
            b.run_until_quiet()
    [late] = arrivals
    assert b.stats()["passes_aborted"] == aborted + 1
    b.run()
    assert b.jobs.job(head).t_run == t0 + 10
    assert b.jobs.job(second).t_run == t0 + 110
    assert b.jobs.job(third).t_run == t0 + 110
    assert b.jobs.job(late).t_run == t0 + 160
    b.observer.assert_clean()


def test_a_job_ending_while_the_pass_that_started_it_waits_is_seen():
    # Jobs that run for no time, their end delivered at once (the mock
    # broker holds it until the pass ends; a job that fails at once in a
    # real instance may end before the pass that started it moves on): the
    # end cuts that pass short, and the next one must see the room it left.
    # It used to take that end as seen: the jobs behind kept their
    # reservations and, nothing else running, never started.
    with mock.patch.object(
        MockBroker, "at_instant_end", lambda broker, fn: broker.at(broker.now, fn)
    ):
        b = start_broker("conservative")
        b.jobs.submit(whole_nodes(4, 100), runtime=10)
        b.run_until_quiet()
        waiting = [
            b.jobs.submit(whole_nodes(4, 100), runtime=runtime) for runtime in (0, 0, 5)
        ]
        b.run_until_quiet()
        aborted = b.stats()["passes_aborted"]
        b.run()
    t0 = b.clock.epoch
    assert [b.jobs.job(j).t_run for j in waiting] == [t0 + 10] * 3
    assert b.stats()["passes_aborted"] > aborted
    b.observer.assert_clean()


def test_a_holder_looks_for_an_earlier_start_through_its_whole_window():
    # Two nodes, both busy until 60; the holder (two nodes for 50 s) holds
    # [100, 150); one node is taken during [95, 100).  A start at 60 would
    # run into that step before the holder's own reservation begins: it
    # cannot move.
    profile = NodeProfile(0.0, 2, [])
    profile.hold(0.0, 60.0, 2)
    profile.hold(95.0, 100.0, 1)
    profile.hold(100.0, 150.0, 2)
    planner = SimpleNamespace(window=lambda d: lambda t: t + d)
    scheduler = SimpleNamespace(planner=planner, _kept_searches=None)
    light = SimpleNamespace(span=lambda jobid: (-math.inf, math.inf))
    keeps = counted.CountedPlanning._keeps
    assert keeps(scheduler, profile, light, 1, (100.0, 150.0, 2), 2, 50.0) == (
        True,
        None,
    )
    # Without that step it can start at 60.
    profile.hold(95.0, 100.0, -1)
    assert keeps(scheduler, profile, light, 1, (100.0, 150.0, 2), 2, 50.0) == (
        False,
        60.0,
    )


def _covers(kept, profile, nodes, span, start, before) -> bool:
    """Would a holder that searches up to *before* skip its search?"""
    return kept.searched_until(profile, nodes, span, start) >= before


def test_a_search_that_found_nothing_covers_those_asking_more():
    # Two nodes busy until 60, a one-node step held during [95, 100): a
    # holder of one node for 50 s reserved at 100 cannot move.  A holder
    # asking no less (more nodes, longer, reserved later, searched no
    # further) cannot either, until the profile gets lighter before the
    # first one's reservation.
    profile = NodeProfile(0.0, 2, [])
    profile.hold(0.0, 60.0, 2)
    profile.hold(60.0, 100.0, 1)
    kept = compression.KeptSearches()
    kept.MIN_STEPS = 0  # (kept only on long profiles as shipped)
    assert not _covers(kept, profile, 2, 50.0, 100.0, 100.0)
    assert profile.earliest(2, lambda t: t + 50.0, before=100.0, cap=100.0) is None
    kept.add(2, 50.0, 100.0, 100.0)
    assert _covers(kept, profile, 2, 80.0, 120.0, 100.0)
    assert _covers(kept, profile, 2, math.inf, 100.0, 90.0)
    assert not _covers(kept, profile, 1, 50.0, 100.0, 100.0)  # fewer nodes
    assert not _covers(kept, profile, 2, 40.0, 100.0, 100.0)  # shorter
    assert not _covers(kept, profile, 2, 50.0, 90.0, 90.0)  # reserved sooner
    assert not _covers(kept, profile, 2, 50.0, 120.0, 110.0)  # searched further
    profile.hold(60.0, 100.0, -1)  # lighter: forgotten
    assert not _covers(kept, profile, 2, 80.0, 120.0, 100.0)
    assert profile.earliest(2, lambda t: t + 50.0, before=100.0, cap=120.0) == 60.0
    # A profile shorter than MIN_STEPS is searched every time.
    shipped = compression.KeptSearches()
    shipped.MIN_STEPS = len(profile.t) + 1
    _covers(shipped, profile, 2, 50.0, 100.0, 100.0)
    shipped.add(2, 50.0, 100.0, 100.0)
    assert not _covers(shipped, profile, 2, 80.0, 120.0, 100.0)


def test_a_search_that_found_nothing_rules_out_starts_up_to_where_it_searched():
    # Two nodes busy until 60, one of them until 100: a holder of two nodes
    # for 50 s reserved at 100 finds no earlier start before 100.  A holder
    # asking no less that searches further starts its search at 100; a
    # hold keeps that known, a release before the first holder's
    # reservation forgets it, one from that reservation on does not.
    profile = NodeProfile(0.0, 2, [])
    profile.hold(0.0, 60.0, 2)
    profile.hold(60.0, 100.0, 1)
    for _ in range(40):  # steps after the reservation, far from the search
        profile.hold(300.0 + 10 * _, 305.0 + 10 * _, 1)
    kept = compression.KeptSearches()
    kept.MIN_STEPS = 0
    assert kept.searched_until(profile, 2, 50.0, 100.0) == -math.inf
    kept.add(2, 50.0, 100.0, 100.0)
    assert kept.searched_until(profile, 2, 50.0, 140.0) == 100.0
    assert kept.searched_until(profile, 3, math.inf, 100.0) == 100.0
    assert kept.searched_until(profile, 1, 50.0, 140.0) == -math.inf  # fewer
    assert kept.searched_until(profile, 2, 40.0, 140.0) == -math.inf  # shorter
    assert kept.searched_until(profile, 2, 50.0, 90.0) == -math.inf  # sooner
    profile.hold(70.0, 80.0, 1)  # heavier
    profile.hold(100.0, 400.0, -1)  # lighter, from its reservation on
    assert kept.searched_until(profile, 2, 50.0, 140.0) == 100.0
    profile.hold(90.0, 100.0, -1)  # lighter before its reservation
    assert kept.searched_until(profile, 2, 50.0, 140.0) == -math.inf
    assert profile.earliest(2, lambda t: t + 50.0, before=100.0, cap=100.0) == 90.0


def test_a_holder_searches_only_past_what_a_kept_search_ruled_out():
    # The first holder's search (one node for 50 s, reserved at 100) finds
    # nothing; the second (one node for 50 s, reserved at 200) then reads
    # no step before 100 and finds 100, as a search from now does.
    profile = NodeProfile(0.0, 2, [])
    profile.hold(0.0, 60.0, 2)
    profile.hold(60.0, 100.0, 2)
    profile.hold(100.0, 150.0, 1)
    profile.hold(200.0, 250.0, 1)
    planner = SimpleNamespace(window=lambda d: lambda t: t + d)
    kept = compression.KeptSearches()
    kept.MIN_STEPS = 0
    scheduler = SimpleNamespace(
        planner=planner, _kept_searches=kept, check_kept_searches=True
    )
    light = SimpleNamespace(span=lambda jobid: (-math.inf, math.inf))
    keeps = counted.CountedPlanning._keeps
    assert keeps(scheduler, profile, light, 1, (100.0, 150.0, 1), 1, 50.0) == (
        True,
        None,
    )
    read = []
    search = profile.earliest

    def earliest(*args, **kw):
        read.append(kw.get("floor"))
        return search(*args, **kw)

    profile.earliest = earliest
    assert keeps(scheduler, profile, light, 2, (200.0, 250.0, 1), 1, 50.0) == (
        False,
        100.0,
    )
    assert read[0] == 100.0  # then the check reads from now
    assert read[1:] == [None]


def _one_core_jobs(b, *jobs):
    """Submit (cores, limit or 0 for none, runtime) jobs of one-core slots."""
    from mock_broker.jobspec import make_jobspec

    return [
        b.jobs.submit(make_jobspec(slots=n, cores=1, duration=limit), runtime=run)
        for n, limit, run in jobs
    ]


def test_jobs_without_a_limit_on_a_machine_held_without_end_get_no_estimate():
    # Every running job holds its cores with no end: a job too big for the
    # cores free now can never be given a start (the pass says so without
    # building its profile), and a smaller one behind it starts now.
    from mock_broker.machine import Machine

    b = start_broker("conservative", machine=Machine.uniform(1, 4))
    _one_core_jobs(b, (3, 0, 50))
    b.run_until_quiet()
    big, small = _one_core_jobs(b, (2, 0, 10), (1, 0, 10))
    b.run_until_quiet()
    t0 = b.clock.epoch
    assert b.jobs.job(small).t_run == t0
    sched = b.jobs.job(big).annotations["sched"]
    assert "t_estimate" not in sched
    assert sched["reason_pending"].endswith("(no start time can be estimated)")
    b.run()
    assert b.jobs.job(big).t_run == t0 + 50
    b.observer.assert_clean()


def test_one_running_job_with_an_end_gives_the_next_blocked_job_its_estimate():
    # The same, but a job with a limit started in the same pass: its end is
    # when the blocked job can start, and the job behind it that would
    # delay that start for ever waits.
    from mock_broker.machine import Machine

    b = start_broker("conservative", machine=Machine.uniform(1, 4))
    _one_core_jobs(b, (2, 0, 500))
    b.run_until_quiet()
    limited, big, endless = _one_core_jobs(b, (1, 100, 100), (2, 0, 10), (1, 0, 10))
    b.run_until_quiet()
    t0 = b.clock.epoch
    assert b.jobs.job(limited).t_run == t0
    assert b.jobs.job(big).annotations["sched"]["t_estimate"] == t0 + 100
    assert b.jobs.job(endless).state == "SCHED"
    b.run()
    assert b.jobs.job(big).t_run == t0 + 100
    b.observer.assert_clean()
