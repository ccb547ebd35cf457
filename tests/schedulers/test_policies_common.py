"""What the three reference schedulers share: arguments, R, stats, restart."""

from __future__ import annotations

import pytest
from conftest import POLICIES, estimate_history, module_path, start_broker
from conftest import whole_nodes as _nodes

from conformance.referee import Referee
from mock_broker.jobspec import make_jobspec
from mock_broker.machine import Machine
from mock_broker.runtime.broker import MockBroker
from mock_broker.runtime.module_host import ModuleLoadError


@pytest.mark.parametrize(
    "policy, arg, named",
    [
        ("fifo", "forecast-depth=-1", "forecast-depth"),
        ("fifo", "forecast-depth=many", "forecast-depth"),
        ("fifo", "forecast-depth", "forecast-depth"),
        ("conservative", "reservation-depth=0", "reservation-depth"),
        ("conservative", "reservation-depth=lots", "reservation-depth"),
        ("easy", "reservation-depth=4", "reservation-depth=4"),
        ("easy", "queue-depth=0", "queue-depth"),
        ("conservative", "log-level=loud", "log-level"),
        ("fifo", "queue_depth=8", "queue_depth=8"),
    ],
)
def test_bad_arguments_fail_the_load_naming_the_argument(policy, arg, named):
    b = MockBroker(Machine.uniform(2, 2))
    Referee.attach(b)
    with pytest.raises(ModuleLoadError) as info:
        b.load(module_path(policy), [arg])
    assert named in str(info.value)
    assert not b.modules


def test_accepted_values_are_listed_in_the_error():
    b = MockBroker()
    Referee.attach(b)
    with pytest.raises(ModuleLoadError, match=r"integer >= 1 or 'unlimited'"):
        b.load(module_path("conservative"), ["reservation-depth=0"])


@pytest.mark.parametrize(
    "policy, args, shown",
    [
        ("fifo", ["forecast-depth=unlimited"], {"forecast_depth": "unlimited"}),
        ("fifo", [], {"forecast_depth": "8"}),
        ("conservative", [], {"reservation_depth": "unlimited"}),
        ("conservative", ["reservation-depth=64"], {"reservation_depth": "64"}),
        ("easy", [], {"reservation_depth": "1"}),
    ],
)
def test_arguments_and_defaults_show_in_stats(policy, args, shown):
    b = start_broker(policy, args)
    stats = b.stats()
    for key, value in shown.items():
        assert stats[key] == value


def test_default_queue_depths(policy):
    b = MockBroker()
    Referee.attach(b)
    b.load(module_path(policy))
    mode = [line for line in b.transcript.lines() if "sched-ready {" in line][0]
    expected = '"limit":8' if policy == "fifo" else '"mode":"unlimited"'
    assert expected in mode


def test_R_carries_starttime_and_expiration(policy):
    b = start_broker(policy)
    limited = b.jobs.submit(_nodes(1, 100), runtime=10)
    unlimited = b.jobs.submit(_nodes(1, 0), runtime=10)
    b.run()
    t0 = b.clock.epoch
    execution = b.jobs.job(limited).R["execution"]
    assert (execution["starttime"], execution["expiration"]) == (t0, t0 + 100)
    execution = b.jobs.job(unlimited).R["execution"]
    assert (execution["starttime"], execution["expiration"]) == (t0, 0.0)
    b.observer.assert_clean()


def test_instance_expiration_bounds_R_expiration(policy):
    t0 = 1_767_225_600.0
    machine = Machine.uniform(4, 4)
    machine = Machine(machine.groups, expiration=t0 + 50)
    b = start_broker(policy, machine=machine)
    long = b.jobs.submit(_nodes(1, 100), runtime=10)
    unlimited = b.jobs.submit(_nodes(1, 0), runtime=10)
    b.run()
    assert b.jobs.job(long).R["execution"]["expiration"] == t0 + 50
    assert b.jobs.job(unlimited).R["execution"]["expiration"] == t0 + 50
    b.observer.assert_clean()


def test_stats_report_planner_figures(policy):
    b = start_broker(policy)
    b.jobs.submit(_nodes(4, 100), runtime=100)
    b.run_until_quiet()
    b.jobs.submit(_nodes(4, 100), runtime=100)
    b.jobs.submit(_nodes(4, 100), runtime=100)
    b.run_until_quiet()
    stats = b.stats()
    assert stats["pending_jobs"] == 2
    assert stats["running_jobs"] == 1
    assert stats["reserved_jobs"] == {"fifo": 2, "easy": 1, "conservative": 2}[policy]
    assert stats["profile_size"] > 0
    assert stats["passes_completed"] >= 1
    assert 0.0 < stats["last_pass_time"] < 1.0
    assert stats["sched_passes"] >= 1  # generator passes, run by flux-python


def test_infeasible_job_is_denied(policy):
    b = start_broker(policy)
    jobid = b.jobs.submit(_nodes(5, 10), runtime=10)
    fits = b.jobs.submit(_nodes(1, 10), runtime=10)
    b.run()
    assert b.jobs.job(jobid).result == "denied"
    assert b.jobs.job(fits).result == "completed"
    b.observer.assert_clean()


def test_restart_plans_around_running_jobs_from_hello(policy):
    b = start_broker(policy)
    running = b.jobs.submit(_nodes(2, 100), runtime=100)
    b.run_for(10)
    b.restart_scheduler()
    wide = b.jobs.submit(_nodes(4, 100), runtime=100)
    b.run_until_quiet()
    t0 = b.clock.epoch
    assert b.jobs.job(running).state == "RUN"
    assert b.jobs.job(wide).annotations["sched"]["t_estimate"] == t0 + 100
    b.run()
    assert b.jobs.job(wide).t_run == t0 + 100
    b.observer.assert_clean()


def test_cancel_clears_reservation_and_later_jobs_move_up(policy):
    b = start_broker(policy)
    b.jobs.submit(_nodes(4, 100), runtime=100)
    b.run_until_quiet()
    first = b.jobs.submit(_nodes(4, 100), runtime=100)
    second = b.jobs.submit(_nodes(4, 100), runtime=100)
    b.run_until_quiet()
    b.jobs.cancel(first)
    b.run_until_quiet()
    t0 = b.clock.epoch
    assert b.jobs.job(second).annotations["sched"]["t_estimate"] == t0 + 100
    b.run()
    assert b.jobs.job(second).t_run == t0 + 100
    b.observer.assert_clean()


def test_gpus_constraints_and_exclusive_nodes(policy):
    machine = Machine.uniform(4, 4, gpus=2, properties=("gpu",))
    b = start_broker(policy, machine=machine)
    t0 = b.clock.epoch
    gpu = b.jobs.submit(
        make_jobspec(nodes=2, slots=2, cores=1, gpus=2, duration=50), runtime=50
    )
    excl = b.jobs.submit(
        make_jobspec(nodes=2, slots=2, cores=1, duration=50, exclusive=True), runtime=50
    )
    more = b.jobs.submit(
        make_jobspec(nodes=1, slots=1, cores=1, gpus=1, duration=50), runtime=50
    )
    ranked = b.jobs.submit(
        make_jobspec(
            nodes=1, slots=1, cores=1, duration=50, constraints={"ranks": ["0"]}
        ),
        runtime=50,
    )
    b.run()
    assert b.jobs.job(gpu).t_run == t0 and b.jobs.job(excl).t_run == t0
    assert b.jobs.job(more).t_run == t0 + 50
    assert b.jobs.job(ranked).R["execution"]["R_lite"][0]["rank"] == "0"
    b.observer.assert_clean()


@pytest.mark.parametrize("name", POLICIES)
def test_module_imports_only_flux_and_flux_sched_base(name):
    import ast

    tree = ast.parse(open(module_path(name)).read())
    roots = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            roots.add(node.module.split(".")[0])
    assert roots <= {"flux", "flux_sched_base", "time", "math"}


def _staggered_queue(policy: str):
    """One node of 4 cores filled by one-core jobs started 10 ms apart (the
    last ends at 50 s, the others run their 100 s), and three one-core jobs
    queued behind them at 1 s: each waits for one running job's end, 10 ms
    after the one before."""
    b = start_broker(policy, machine=Machine.uniform(1, 4))
    one_core = make_jobspec(slots=1, cores=1, duration=100)
    for i in range(4):
        b.at(
            b.now + i * 0.01,
            lambda i=i: b.jobs.submit(one_core, runtime=50 if i == 3 else 100),
        )
    queued = []
    b.at(
        b.now + 1,
        lambda: queued.extend(b.jobs.submit(one_core, runtime=100) for _ in range(3)),
    )
    return b, queued


@pytest.mark.parametrize("policy", ["fifo", "conservative"])
def test_estimates_moving_earlier_by_milliseconds_are_not_sent_again(policy):
    # At 50 s the first queued job starts in the core that freed early; the
    # two behind it now wait for the ends 10 ms sooner than announced.  A
    # move of less than a second is not announced (ESTIMATE_SLACK): they
    # start up to 10 ms before their t_estimate, never after it.
    b, queued = _staggered_queue(policy)
    b.run()
    t0 = b.clock.epoch
    sent = {
        j: [v for _, v in vs if v is not None] for j, vs in estimate_history(b).items()
    }
    assert sent[queued[1]] == [t0 + 100.01]
    assert sent[queued[2]] == [t0 + 100.02]
    assert b.jobs.job(queued[1]).t_run == pytest.approx(t0 + 100.0, abs=1e-6)
    assert b.jobs.job(queued[2]).t_run == pytest.approx(t0 + 100.01, abs=1e-6)
    b.observer.assert_clean()


@pytest.mark.parametrize("policy", ["fifo", "conservative"])
def test_every_move_of_an_estimate_is_sent_without_slack(policy, monkeypatch):
    from flux_sched_base import annotations

    monkeypatch.setattr(annotations, "ESTIMATE_SLACK", 0.0)
    monkeypatch.setattr(annotations, "ESTIMATE_FRACTION", 0.0)
    b, queued = _staggered_queue(policy)
    b.run()
    t0 = b.clock.epoch
    sent = {
        j: [v for _, v in vs if v is not None] for j, vs in estimate_history(b).items()
    }
    assert sent[queued[1]] == pytest.approx([t0 + 100.01, t0 + 100.0], abs=1e-6)
    assert sent[queued[2]] == pytest.approx([t0 + 100.02, t0 + 100.01], abs=1e-6)


@pytest.mark.parametrize("fraction, sent_for_last", [(None, 1), (0.0, 2)])
@pytest.mark.parametrize("policy", ["fifo", "conservative"])
def test_a_start_a_day_away_moving_a_minute_earlier_is_not_sent_again(
    policy, fraction, sent_for_last, monkeypatch
):
    # One core: A (limit 100 s) ends 60 s early, at 40 s; B (limit 100,000 s)
    # was to start at 100 s and starts at once, so C behind it moves from
    # 100,100 to 100,040: 60 s earlier on a start 100,000 s away, less than
    # ESTIMATE_FRACTION (1%) of the wait.  C starts 60 s before its estimate.
    from flux_sched_base import annotations

    if fraction is not None:
        monkeypatch.setattr(annotations, "ESTIMATE_FRACTION", fraction)
    b = start_broker(policy, machine=Machine.uniform(1, 1))
    one_core = make_jobspec(slots=1, cores=1, duration=100)
    b.jobs.submit(one_core, runtime=40)
    b.run_until(b.now + 1)
    b.jobs.submit(make_jobspec(slots=1, cores=1, duration=100_000), runtime=100_000)
    last = b.jobs.submit(one_core, runtime=100)
    b.run()
    t0 = b.clock.epoch
    sent = [v for _, v in estimate_history(b)[last] if v is not None]
    assert sent == [t0 + 100_100, t0 + 100_040][:sent_for_last]
    assert b.jobs.job(last).t_run == t0 + 100_040
    b.observer.assert_clean()


@pytest.mark.parametrize("policy", ["fifo", "conservative"])
def test_an_estimate_moving_later_by_milliseconds_is_sent(policy):
    # A higher-priority job arriving at 2 s takes the end at 100 s: each
    # queued job now waits 10 ms longer than announced, which is sent.
    b, queued = _staggered_queue(policy)
    one_core = make_jobspec(slots=1, cores=1, duration=100)
    b.at(b.now + 2, lambda: b.jobs.submit(one_core, runtime=100, urgency=24))
    b.run_until(b.now + 3)
    t0 = b.clock.epoch
    sent = {
        j: [v for _, v in vs if v is not None] for j, vs in estimate_history(b).items()
    }
    assert sent[queued[0]] == pytest.approx([t0 + 100.0, t0 + 100.01], abs=1e-6)
    assert sent[queued[1]] == pytest.approx([t0 + 100.01, t0 + 100.02], abs=1e-6)
    b.run()
    for jobid in queued:
        assert b.jobs.job(jobid).t_run <= sent[jobid][-1]
    b.observer.assert_clean()
