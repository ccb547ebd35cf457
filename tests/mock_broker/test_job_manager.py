"""The job-manager model: user cancel, hold, prioritize, expiration
updates, feasibility, stats, queue order, scheduler-raised exceptions."""

from __future__ import annotations

import pytest
from mock_broker_helpers import (
    SEED,
    allocated,
    elapsed,
    messages,
    notes,
    ranks,
    sched,
    whole_nodes,
)

from mock_broker.jobmanager.jobs import PRIORITY_MAX, priority_from_urgency
from mock_broker.jobspec import make_jobspec
from mock_broker.machine import Machine
from mock_broker.runtime.clock import EPOCH


def one_node_busy(make_broker, target=SEED, args=()):
    """One node held for 100 s by job A; job B waits behind it."""
    b = make_broker(Machine.uniform(1, 4))
    b.load(target, list(args))
    a = b.jobs.submit(whole_nodes(1), runtime=100)
    b.run_for(1.0)
    jb = b.jobs.submit(whole_nodes(1), runtime=10)
    b.run_for(1.0)
    assert b.jobs.job(jb).alloc_pending
    return b, a, jb


# -- user cancel -------------------------------------------------------------------


def test_user_cancel_of_a_pending_job(make_broker):
    b, a, jb = one_node_busy(make_broker)
    mark = len(b.transcript)
    b.jobs.cancel(jb)
    # at once, before the scheduler has said anything
    assert [m["payload"] for m in messages(b, "sched.cancel", mark)] == [{"id": jb}]
    job = b.jobs.job(jb)
    assert (job.state, job.result, job.alloc_pending) == ("INACTIVE", "canceled", False)
    assert elapsed(b, job.t_end) == 2.0
    b.run()
    # the scheduler's CANCEL answer is accepted and ignored
    answers = [m["payload"] for m in messages(b, "sched.alloc (response)", mark)]
    assert answers == [{"id": jb, "type": 3}]
    assert b.jobs.job(jb).state == "INACTIVE" and b.jobs.job(jb).t_run is None
    assert elapsed(b, b.jobs.job(a).t_end) == 100.0
    assert b.observer.violations == []


def test_the_sched_count_follows_jobs_into_and_out_of_sched(make_broker):
    b, a, jb = one_node_busy(make_broker)
    counts = [b.jobs.sched_count]
    jc = b.jobs.submit(whole_nodes(1), runtime=10)  # waits too
    counts.append(b.jobs.sched_count)
    b.jobs.cancel(jb)  # leaves SCHED without running
    counts.append(b.jobs.sched_count)
    b.jobs.cancel(a)  # a running job: jc starts on its node
    b.run()
    counts.append(b.jobs.sched_count)
    assert counts == [1, 2, 1, 0]
    assert b.jobs.job(jc).result == "completed"
    assert b.jobs.sched_count == len(b.jobs.jobs_in("SCHED"))


def test_late_success_for_a_cancelled_job_is_freed_at_once(make_broker):
    # The generator scheduler answers in a later reactor iteration than the
    # one that committed R: cancel the job in between, and the SUCCESS
    # crosses the sched.cancel, as it can in a real instance.
    b = make_broker(Machine.uniform(1, 4))
    b.load(sched("seed_generator.py"))
    jid = b.jobs.submit(whole_nodes(1), runtime=10)
    key = f"job.0000.0000.0000.{jid:04x}.R"
    assert b.run_until_condition(lambda: key in b.kvs)
    assert messages(b, "sched.alloc (response)") == []
    mark = len(b.transcript)
    b.jobs.cancel(jid)
    assert b.jobs.job(jid).state == "INACTIVE"
    b.run_until_quiet()
    sequence = [(m["topic"], m["payload"]) for m in messages(b, start=mark)]
    assert [t for t, _ in sequence] == [
        "sched.cancel",
        "sched.alloc (response)",
        "sched.free",
    ]
    assert sequence[1][1]["type"] == 0
    assert sequence[2][1]["id"] == jid and sequence[2][1]["final"] is True
    assert ranks(sequence[2][1]["R"]) == [0]
    job = b.jobs.job(jid)
    assert job.t_run is None and not job.has_resources and job.result == "canceled"
    assert allocated(b) == []
    assert b.observer.violations == []


def test_cancel_of_a_running_job_frees_it(make_broker):
    b = make_broker(Machine.uniform(1, 4))
    b.load(SEED)
    jid = b.jobs.submit(whole_nodes(1), runtime=100)
    b.run_for(5.0)
    b.jobs.cancel(jid)
    b.run_until_quiet()
    job = b.jobs.job(jid)
    assert (job.state, job.result, elapsed(b, job.t_end)) == (
        "INACTIVE",
        "canceled",
        5.0,
    )
    frees = messages(b, "sched.free")
    assert [(m["t"], m["payload"]["final"]) for m in frees] == [(5.0, True)]
    assert messages(b, "sched.cancel") == []


# -- hold and priorities ---------------------------------------------------------------


def test_urgency_zero_while_pending_cancels_the_request(make_broker):
    b, a, jb = one_node_busy(make_broker)
    mark = len(b.transcript)
    b.jobs.set_urgency(jb, 0)
    b.run_for(1.0)
    seq = [(m["topic"], m["payload"]) for m in messages(b, start=mark)]
    assert seq == [
        ("sched.cancel", {"id": jb}),
        ("sched.alloc (response)", {"id": jb, "type": 3}),
    ]
    job = b.jobs.job(jb)
    assert (job.state, job.priority, job.alloc_pending, job.alloc_queued) == (
        "SCHED",
        0,
        False,
        False,
    )
    b.run_until(EPOCH + 150.0)
    assert b.jobs.job(jb).state == "SCHED"  # held: not run though the node is free
    mark = len(b.transcript)
    b.jobs.set_urgency(jb, 16)  # release
    b.run()
    again = messages(b, "sched.alloc", mark)
    assert [(m["payload"]["id"], m["payload"]["priority"]) for m in again] == [(jb, 16)]
    assert elapsed(b, b.jobs.job(jb).t_run) == 150.0
    assert b.observer.violations == []


def test_urgency_change_of_a_pending_job_sends_prioritize(make_broker):
    b, a, jb = one_node_busy(make_broker)
    mark = len(b.transcript)
    b.jobs.set_urgency(jb, 20)
    b.run_for(1.0)
    assert [m["payload"] for m in messages(b, start=mark)] == [{"jobs": [[jb, 20]]}]
    assert messages(b, start=mark)[0]["topic"] == "sched.prioritize"


def test_prioritize_batch(make_broker):
    b = make_broker(Machine.uniform(1, 4))
    b.load(SEED)
    a = b.jobs.submit(whole_nodes(1), runtime=100)
    b.run_for(1.0)
    jb = b.jobs.submit(whole_nodes(1), runtime=10)
    jc = b.jobs.submit(whole_nodes(1), runtime=10)
    b.run_for(1.0)
    mark = len(b.transcript)
    b.jobs.prioritize({jb: 5, jc: 20, a: 30})  # a is running: not sent
    b.run_for(1.0)
    prio = messages(b, "sched.prioritize", mark)
    assert [m["payload"] for m in prio] == [{"jobs": [[jb, 5], [jc, 20]]}]
    assert len(messages(b, start=mark)) == 1  # no response to sched.prioritize
    b.run()
    # the scheduler re-sorted its queue: C first
    assert elapsed(b, b.jobs.job(jc).t_run) == 100.0
    assert elapsed(b, b.jobs.job(jb).t_run) == 110.0
    assert b.observer.violations == []


def test_priority_from_urgency():
    assert [priority_from_urgency(u) for u in (0, 1, 16, 30, 31)] == [
        0,
        1,
        16,
        30,
        PRIORITY_MAX,
    ]


def test_urgency_out_of_range(make_broker):
    b = make_broker()
    with pytest.raises(ValueError, match="urgency 32 is outside 0-31"):
        b.jobs.submit(whole_nodes(1), urgency=32)


def test_queue_order_is_priority_then_submission(make_broker):
    b = make_broker(Machine.uniform(1, 4))
    urgencies = [16, 20, 16, 31, 0, 1]
    ids = [b.jobs.submit(whole_nodes(1), urgency=u, runtime=10) for u in urgencies]
    b.load(SEED)  # requests go out in queue order once the scheduler is ready
    b.run_for(1.0)
    sent = [
        (m["payload"]["id"], m["payload"]["priority"])
        for m in messages(b, "sched.alloc")
    ]
    assert sent == [
        (ids[3], PRIORITY_MAX),
        (ids[1], 20),
        (ids[0], 16),
        (ids[2], 16),
        (ids[5], 1),
    ]  # the held job (urgency 0) is not sent
    b.run()
    starts = [elapsed(b, b.jobs.job(j).t_run) for j in ids]
    assert starts == [20.0, 10.0, 30.0, 0.0, None, 40.0]


# -- expiration ---------------------------------------------------------------------------


def test_expiration_shortened_by_update(make_broker):
    b = make_broker(Machine.uniform(1, 4))
    b.load(SEED)
    jid = b.jobs.submit(whole_nodes(1), runtime=100)
    b.run_for(10.0)
    mark = len(b.transcript)
    b.jobs.update_expiration(jid, EPOCH + 30.0)
    b.run_until_quiet()
    seq = [(m["topic"], m["payload"]) for m in messages(b, start=mark)]
    assert seq == [
        ("sched.expiration", {"id": jid, "expiration": EPOCH + 30.0}),
        ("sched.expiration (response)", None),
    ]
    assert b.kvs.get(f"job.0000.0000.0000.{jid:04x}.R")["execution"]["expiration"] == (
        EPOCH + 30.0
    )
    b.run()
    job = b.jobs.job(jid)
    assert (job.result, elapsed(b, job.t_end)) == ("timeout", 30.0)
    assert job.exceptions == [("timeout", 0, "resource allocation expired")]


def test_a_job_that_runs_for_no_time_ends_after_the_pass_that_started_it(
    make_broker,
):
    # The generator example starts one job per reactor iteration.  Z runs
    # for no time: its end comes once the pass that started it has also
    # started B, as in the textbook definitions (a decision at an instant
    # is whole), not between the two, where it would cut the pass short.
    b = make_broker(Machine.uniform(1, 4))
    b.load(sched("seed_generator.py"))
    a = b.jobs.submit(whole_nodes(1), runtime=10)
    b.run_for(1.0)
    mark = len(b.transcript)
    z = b.jobs.submit(make_jobspec(cores=1), runtime=0)
    jb = b.jobs.submit(make_jobspec(cores=1), runtime=5)
    b.run()
    order = [
        (m["topic"], m["payload"]["id"])
        for m in messages(b, None, mark)
        if m["topic"] in ("sched.alloc (response)", "sched.free")
    ]
    assert order == [
        ("sched.free", a),
        ("sched.alloc (response)", z),
        ("sched.alloc (response)", jb),
        ("sched.free", z),
        ("sched.free", jb),
    ]
    assert elapsed(b, b.jobs.job(z).t_end) == 10.0
    assert b.observer.violations == []


def test_runtime_beyond_R_expiration_times_out(make_broker):
    b = make_broker(Machine.uniform(1, 4))
    b.load(sched("expiring.py"))
    jid = b.jobs.submit(whole_nodes(1, duration=50), runtime=80)
    b.run()
    job = b.jobs.job(jid)
    assert job.R["execution"]["expiration"] == EPOCH + 50.0
    assert (job.result, elapsed(b, job.t_end)) == ("timeout", 50.0)


@pytest.mark.parametrize(
    "mode, result, end",
    [
        ("accept", "completed", 80.0),
        ("enosys", "completed", 80.0),
        ("refuse", "timeout", 50.0),
    ],
)
def test_expiration_extension(make_broker, mode, result, end):
    b = make_broker(Machine.uniform(1, 4))
    b.load(sched("expiring.py"), [f"expiration={mode}"])
    jid = b.jobs.submit(whole_nodes(1, duration=50), runtime=80)
    b.run_for(10.0)
    mark = len(b.transcript)
    b.jobs.update_expiration(jid, EPOCH + 100.0)
    b.run()
    response = messages(b, "sched.expiration (response)", mark)
    assert len(response) == 1
    assert (
        response[0].get("errnum", 0) == {"accept": 0, "enosys": 38, "refuse": 22}[mode]
    )
    job = b.jobs.job(jid)
    assert (job.result, elapsed(b, job.t_end)) == (result, end)
    refused = f"expiration update of {job.f58} refused"
    assert (refused in notes(b, mark)) == (mode == "refuse")
    expected_R_expiration = EPOCH + (50.0 if mode == "refuse" else 100.0)
    assert job.R["execution"]["expiration"] == expected_R_expiration
    assert b.observer.violations == []


def test_update_expiration_needs_a_running_job(make_broker):
    b, a, jb = one_node_busy(make_broker)
    with pytest.raises(ValueError, match="is not running"):
        b.jobs.update_expiration(jb, EPOCH + 10)


# -- feasibility and stats -------------------------------------------------------------------


def test_feasibility_check(make_broker):
    b = make_broker(Machine.uniform(2, 4))
    b.load(SEED)
    b.jobs.submit(whole_nodes(2), runtime=100)  # busy now, but feasible
    b.run_for(1.0)
    assert b.feasibility_check(whole_nodes(2)) is None
    assert b.feasibility_check(make_jobspec(slots=8, cores=1)) is None
    assert b.feasibility_check(whole_nodes(3)) == (
        "unsatisfiable request: need 3 node(s) with 4 cores each, only 2 eligible"
    )
    assert b.feasibility_check(whole_nodes(1, cores=5)) is not None
    assert b.feasibility_check({"version": 1}) == "jobspec has no resources"
    checks = messages(b, "feasibility.check")
    assert len(checks) == 5 and checks[0]["payload"] == {"jobspec": whole_nodes(2)}


def test_stats_are_the_base_class_keys(make_broker):
    b = make_broker(Machine.uniform(1, 4))
    b.load(SEED)
    b.jobs.submit(whole_nodes(1), runtime=100)
    b.jobs.submit(whole_nodes(1), runtime=100)
    b.run_for(1.0)
    stats = b.stats()
    assert set(stats) == {
        "sched_passes",
        "sched_yields",
        "forecast_passes",
        "forecast_yields",
        "sched_delay",
        "sched_duration_ewma",
        "sched_interval_ewma",
        "pending_jobs",
    }
    assert stats["pending_jobs"] == 1
    assert stats["sched_passes"] == 1
    assert stats["sched_yields"] == 0
    assert messages(b, "seed_minimal.stats-get")[0]["payload"] is None


# -- exceptions raised by the scheduler --------------------------------------------------------


def test_scheduler_restart_exception_when_hello_cannot_take_R_back(make_broker):
    b = make_broker(Machine.uniform(2, 4))
    b.load(SEED)
    kept = b.jobs.submit(whole_nodes(1), runtime=100)
    lost = b.jobs.submit(whole_nodes(1), runtime=100)
    b.run_for(10.0)
    assert ranks(b.jobs.job(lost).R) == [1]
    b.resources.shrink("1")
    b.run_for(1.0)
    mark = len(b.transcript)
    b.restart_scheduler()
    raised = messages(b, "job-manager.raise", mark)
    assert [m["payload"] for m in raised] == [
        {
            "id": lost,
            "type": "scheduler-restart",
            "severity": 0,
            "note": "failed to reallocate R for running job",
        }
    ]
    job = b.jobs.job(lost)
    assert (job.state, job.result, elapsed(b, job.t_end)) == (
        "INACTIVE",
        "exception",
        11.0,
    )
    assert job.exceptions == [
        ("scheduler-restart", 0, "failed to reallocate R for running job")
    ]
    b.run()
    assert b.jobs.job(kept).result == "completed"
    assert allocated(b) == []
    assert b.observer.violations == []


@pytest.mark.parametrize(
    "jobspec",
    [
        "not a dict",
        {"attributes": "x"},
        {"attributes": {"system": ["duration"]}},
        {"attributes": {"system": {"duration": True}}},
        {"attributes": {"system": {"duration": -60}}},
    ],
)
def test_a_hostile_jobspec_has_no_duration_and_does_not_break_submit(
    make_broker, jobspec
):
    # The job-manager model must carry any JSON jobspec to the scheduler,
    # which is the one that must deny it.
    broker = make_broker()
    jobid = broker.jobs.submit(jobspec)
    assert broker.jobs.job(jobid).duration == 0.0


def test_a_jobspec_no_broker_could_carry_is_refused_at_submit(make_broker):
    broker = make_broker()
    with pytest.raises(ValueError, match="cannot travel"):
        broker.jobs.submit({"attributes": {"system": {"duration": float("nan")}}})


def test_a_crashed_scheduler_can_be_loaded_again(make_broker):
    broker = make_broker()
    broker.load(sched("broken.py:RaisesInSchedule"))
    broker.jobs.submit(whole_nodes(1))
    broker.run_until_quiet()
    assert broker.scheduler is None
    broker.restart_scheduler(args=[])
    assert broker.scheduler is not None
