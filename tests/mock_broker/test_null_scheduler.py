"""``benchmarks/null_scheduler.py``, the module whose rate in
``mock_throughput.py`` stands for the mock broker's own cost: it must be a
correct RFC 27 scheduler, or that rate would measure a broken run."""

from __future__ import annotations

from pathlib import Path

from conformance.referee import Referee
from mock_broker.jobspec import make_jobspec
from mock_broker.machine import Machine
from mock_broker.runtime.broker import MockBroker

NULL = Path(__file__).parents[2] / "benchmarks" / "null_scheduler.py"


def test_null_scheduler_runs_every_job_first_come_first_served():
    broker = MockBroker(Machine.uniform(4, 4), seed=1)
    Referee.attach(broker)
    broker.load(str(NULL))
    ids = [
        broker.jobs.submit(
            make_jobspec(slots=1, cores=1 + i % 4, duration=100), runtime=5 + i % 7
        )
        for i in range(60)
    ]
    too_big = broker.jobs.submit(make_jobspec(slots=1, cores=5, duration=100))
    broker.run()
    jobs = [broker.jobs.jobs[i] for i in ids]
    assert all(j.result == "completed" for j in jobs)
    starts = [j.t_run for j in jobs]
    assert starts == sorted(starts)  # no job overtakes an earlier one
    assert starts[-1] > starts[0]  # the machine was full: some waited
    assert broker.jobs.jobs[too_big].result == "denied"
    broker.observer.assert_clean()
