"""Planning with node counts, planning with ranks, and the way between."""

from __future__ import annotations

from conftest import estimate_history, start_broker
from conftest import whole_nodes as _nodes

from mock_broker.jobspec import make_jobspec
from mock_broker.machine import Machine


def cores(n: int, duration: float) -> dict:
    """*n* single-core slots anywhere (a trace job on single-core nodes)."""
    return make_jobspec(slots=n, cores=1, duration=duration)


def test_easy_second_rule_on_single_core_nodes():
    # Ranks 2-3 run until 100 and ranks 0-1 are free.  The head needs 3 of
    # the 4 nodes at 100: one is spare then, so one long job may start now
    # on a free node, whichever (a reservation pinned to ranks 0-2 would
    # have forbidden it); a second may not.
    b = start_broker("easy", machine=Machine.uniform(4, 1))
    b.jobs.submit(cores(2, 10), runtime=10)  # ranks 0-1
    b.jobs.submit(cores(2, 100), runtime=100)  # ranks 2-3
    b.run_for(10)
    head = b.jobs.submit(cores(3, 100), runtime=100)
    first = b.jobs.submit(cores(1, 1000), runtime=1000)
    second = b.jobs.submit(cores(1, 1000), runtime=1000)
    b.run_until_quiet()
    t0 = b.clock.epoch
    assert b.jobs.job(first).t_run == t0 + 10
    assert b.jobs.job(second).state == "SCHED"
    assert b.jobs.job(head).annotations["sched"]["t_estimate"] == t0 + 100
    assert b.stats()["reserved_jobs"] == 1
    b.run()
    assert b.jobs.job(head).t_run == t0 + 100
    assert b.jobs.job(second).t_run == t0 + 200
    b.observer.assert_clean()


def test_conservative_second_rule_on_single_core_nodes():
    # Two reservations, at 100 (3 nodes) and 200 (4 nodes): a long 1-node
    # job fits now until 200 only on the node the first leaves spare.
    b = start_broker("conservative", machine=Machine.uniform(4, 1))
    b.jobs.submit(cores(2, 100), runtime=100)
    b.run_until_quiet()
    wide = b.jobs.submit(cores(3, 100), runtime=100)
    full = b.jobs.submit(cores(4, 100), runtime=100)
    fits = b.jobs.submit(cores(1, 200), runtime=200)
    late = b.jobs.submit(cores(1, 201), runtime=201)
    b.run_until_quiet()
    t0 = b.clock.epoch
    assert b.jobs.job(fits).t_run == t0
    assert b.jobs.job(late).annotations["sched"]["t_estimate"] == t0 + 300
    b.run()
    starts = [b.jobs.job(j).t_run - t0 for j in (wide, full, fits, late)]
    assert starts == [100, 200, 0, 300]
    b.observer.assert_clean()


def test_count_reservations_carry_over_when_a_core_level_job_arrives():
    # Whole-node jobs are planned with counts; a core-level arrival makes
    # the next pass plan with ranks: the reservations keep their times.
    b = start_broker("conservative")
    b.jobs.submit(_nodes(4, 100), runtime=100)
    b.run_until_quiet()
    wide = b.jobs.submit(_nodes(4, 100), runtime=100)
    half = b.jobs.submit(_nodes(2, 50), runtime=50)
    b.run_until_quiet()
    t0 = b.clock.epoch
    before = {j: b.jobs.job(j).annotations["sched"]["t_estimate"] for j in (wide, half)}
    assert before == {wide: t0 + 100, half: t0 + 200}
    small = b.jobs.submit(make_jobspec(slots=2, cores=1, duration=30), runtime=30)
    b.run_until_quiet()
    after = {j: b.jobs.job(j).annotations["sched"]["t_estimate"] for j in (wide, half)}
    assert after == before
    assert b.jobs.job(small).annotations["sched"]["t_estimate"] == t0 + 200
    b.run()
    for jobid, start in before.items():
        assert b.jobs.job(jobid).t_run == start
    assert b.jobs.job(small).t_run == t0 + 200
    b.observer.assert_clean()


def test_identical_job_ahead_takes_the_earlier_start():
    # Two identical 2 x 3-core jobs hold reservations at 40 on ranks 0-1
    # and 2-3.  A job on ranks 2-3 ends at 20 instead of 40: only the
    # second could use ranks 2-3 early (the first's reservation pins 0-1,
    # still busy), so the two swap: the first starts at 20.
    b = start_broker("conservative")
    spec = make_jobspec(slots=2, cores=3, duration=40)
    one = make_jobspec(slots=1, cores=1, duration=20)
    b.jobs.submit(one, runtime=20)
    b.jobs.submit(one, runtime=20)
    b.jobs.submit(spec, runtime=20)
    b.jobs.submit(spec, runtime=40)
    first = b.jobs.submit(spec, runtime=40)
    second = b.jobs.submit(spec, runtime=40)
    b.run()
    t0 = b.clock.epoch
    assert (b.jobs.job(first).t_run, b.jobs.job(second).t_run) == (t0 + 20, t0 + 40)
    history = estimate_history(b)
    assert [v for _, v in history[first] if v is not None] == [t0 + 40]
    b.observer.assert_clean()
