"""Replaying a workload on the mock broker: per-job records, the broker's
dates, and why jobs were left unfinished."""

from __future__ import annotations

import pytest
from replay_helpers import KTH, SEED, SMALL, scheduler_module, write

from mock_broker.machine import Machine
from mock_broker.runtime.clock import EPOCH
from replay.runner import replay
from replay.swf import read_swf
from replay.workload import prepare


def small(tmp_path):
    return prepare(str(write(tmp_path, SMALL)))


def test_records_of_a_known_schedule(tmp_path):
    # 4 one-core nodes.  Job 1 (2 procs) runs 100-150; job 2 (4 procs)
    # waits for it: starts at 150 (wait 40), runs 30; job 4 (3 procs,
    # submitted at 130) waits behind job 2 under FIFO: starts at 180.
    source = small(tmp_path)
    result, broker = replay(SEED, source.workload, source.machine, label="seed")
    broker.close()
    rows = [(r.id, r.submit, r.start, r.end, r.wait, r.run) for r in result.records]
    assert rows == [
        (1, 100.0, 100.0, 150.0, 0.0, 50.0),
        (2, 110.0, 150.0, 180.0, 40.0, 30.0),
        (4, 130.0, 180.0, 200.0, 50.0, 20.0),
    ]
    assert [(r.ranks, r.nodes, r.cores) for r in result.records] == [
        ("0-1", 2, 2),
        ("0-3", 4, 4),
        ("0-2", 3, 3),
    ]
    assert [r.estimate for r in result.records] == ["requested"] * 2 + ["run time"]
    assert [r.result for r in result.records] == ["completed"] * 3
    assert result.problems == []
    assert result.metrics.jobs == 3
    assert result.metrics.mean_wait == pytest.approx(30.0)


def test_a_job_ends_at_its_limit(tmp_path):
    # Job 1 asks for 60 s but runs 90: it ends at its expiration.
    text = "1 0 0 90 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1\n"
    source = prepare(str(write(tmp_path, text)), nodes=1)
    result, broker = replay(SEED, source.workload, source.machine)
    broker.close()
    (record,) = result.records
    assert (record.start, record.end, record.result) == (0.0, 60.0, "timeout")
    assert result.metrics.timeout == 1


def test_the_broker_clock_follows_the_trace_dates(tmp_path):
    source = small(tmp_path)
    result, broker = replay(
        SEED, source.workload, source.machine, unix_start_time=1_000_000
    )
    first = broker.jobs.job(min(broker.jobs.jobs))
    assert first.t_submit == 1_000_000 + 100
    broker.close()
    _, broker = replay(SEED, source.workload, source.machine)
    assert broker.jobs.job(min(broker.jobs.jobs)).t_submit == EPOCH + 100
    broker.close()


def test_progress_counts_ended_jobs(tmp_path):
    source = small(tmp_path)
    seen = []
    _, broker = replay(SEED, source.workload, source.machine, progress=seen.append)
    broker.close()
    assert seen == sorted(seen)
    assert seen[0] == 0 and seen[-1] == 3


def test_replay_is_deterministic(tmp_path):
    source = small(tmp_path)
    first, b1 = replay(SEED, source.workload, source.machine)
    second, b2 = replay(SEED, source.workload, source.machine)
    assert b1.transcript.to_jsonl() == b2.transcript.to_jsonl()
    assert first.records == second.records
    b1.close()
    b2.close()


def test_pending_jobs_are_explained(tmp_path):
    module = scheduler_module(tmp_path, "idle", "pass  # never allocates")
    source = small(tmp_path)
    result, broker = replay(module, source.workload, source.machine)
    broker.close()
    assert [r.result for r in result.records] == ["pending"] * 3
    assert result.metrics.unfinished == 3
    (problem,) = result.problems
    assert problem.startswith("3 jobs never started")
    assert "trace job 1" in problem


def test_a_scheduler_that_exits_is_explained(tmp_path):
    module = scheduler_module(tmp_path, "crashing", 'raise RuntimeError("policy bug")')
    source = small(tmp_path)
    result, broker = replay(module, source.workload, source.machine)
    broker.close()
    assert result.problems[0].startswith("the scheduler module exited")
    assert "policy bug" in result.problems[0]


def test_trace_jobs_are_mapped_with_the_defaults(tmp_path):
    # The older call: trace jobs rather than a workload.
    trace = read_swf(write(tmp_path, SMALL))
    result, broker = replay(SEED, trace.jobs, Machine.uniform(4, 1))
    broker.close()
    assert [r.id for r in result.records] == [1, 2, 4]


def test_no_jobs_is_an_error():
    with pytest.raises(ValueError, match="no jobs"):
        replay(SEED, [], Machine.uniform(4, 1))


needs_kth = pytest.mark.skipif(
    not KTH.exists(), reason=f"the KTH-SP2 trace is not there ({KTH})"
)


@needs_kth
@pytest.mark.parametrize("policy", ["easy", "conservative"])
def test_reference_schedulers_replay_kth_cleanly(policy):
    # fifo: test_kth_fcfs.py replays a longer prefix, job for job.
    from conformance.referee import Referee
    from flux_schedkit.reference import reference_path

    source = prepare(str(KTH), limit=500)
    result, broker = replay(
        str(reference_path(policy)),
        source.workload,
        source.machine,
        watch=Referee.attach,
    )
    broker.close()
    assert result.violations == []
    assert result.problems == []
    assert result.metrics.started == 500


@needs_kth
def test_backfilling_waits_less_than_fifo_on_kth():
    from flux_schedkit.reference import reference_path

    source = prepare(str(KTH), limit=300)
    waits = {}
    for policy in ("fifo", "easy"):
        result, broker = replay(
            str(reference_path(policy)), source.workload, source.machine
        )
        waits[policy] = result.metrics.mean_wait
        broker.close()
    assert waits["easy"] < waits["fifo"] / 2


INTERRUPTING = """\
import os
import signal

from flux.scheduler import Scheduler


class Interrupting(Scheduler):
    sent = False

    def schedule(self):
        if not self.sent:  # Ctrl-C pressed while the scheduler runs
            Interrupting.sent = True
            os.kill(os.getpid(), signal.SIGINT)


def mod_main(h, *args):
    Interrupting(h, *args).run()
"""


def test_ctrl_c_stops_between_steps_not_inside_the_scheduler(tmp_path):
    # Scheduler callbacks run on the main thread: an interrupt raised in
    # one would pass for the module's own failure, and the replay would go
    # on.  The runner stops the run between steps instead, with the module
    # still loaded.
    import signal

    module = tmp_path / "interrupting.py"
    module.write_text(INTERRUPTING)
    source = small(tmp_path)
    brokers = []
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            replay(str(module), source.workload, source.machine, watch=brokers.append)
    finally:
        signal.signal(signal.SIGINT, previous)
    (broker,) = brokers
    assert broker.scheduler is not None  # the module did not exit
    broker.close()
