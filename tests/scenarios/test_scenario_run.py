"""Running scenarios: expectations, expected violations, steps, determinism."""

from __future__ import annotations

import json

import pytest

from conformance.referee import Referee
from conformance.scenarios.runner import ScenarioError, library_paths, run_scenario
from mock_broker.jobspec import make_jobspec

HELLO_OVERLAP = """\
description: a scheduler that ignores hello double-books the running job's nodes
machine: {nodes: 2, cores: 4}
running:
  - {name: old, ranks: 0-1, runtime: 30}
steps:
  - at: 0
    submit: {name: new, nodes: 2, cores: 4, runtime: 10}
expect:
  violations: [R-overlap]
  jobs:
    new: {started_at: 0}
"""


def test_an_expected_violation_lets_the_scenario_pass(write_scenario, scheduler_path):
    result = run_scenario(
        write_scenario(HELLO_OVERLAP), scheduler_path("forgetful_hello.py")
    )
    assert result.passed, result.reasons()
    assert result.broker.observer.kinds() == ["R-overlap"]
    assert result.violations == []


def test_an_expected_violation_that_does_not_occur_fails(write_scenario, seed):
    result = run_scenario(write_scenario(HELLO_OVERLAP), seed)
    assert not result.passed
    assert "expect.violations: expected violation 'R-overlap' did not occur" in (
        result.failures
    )
    assert "expect.jobs.new: started_at: is 30, expected 0" in result.failures


def test_an_unexpected_violation_is_reported_with_its_transcript(
    write_scenario, scheduler_path
):
    text = HELLO_OVERLAP.replace("  violations: [R-overlap]\n", "")
    result = run_scenario(write_scenario(text), scheduler_path("forgetful_hello.py"))
    assert not result.passed and result.failures == []
    (violation,) = result.violations
    assert violation.kind == "R-overlap"
    (reason,) = result.reasons()
    assert reason.startswith("[R-overlap] at t=0.000")
    assert "transcript around" in reason and ">>" in reason


def test_checkpoints_are_checked_when_the_clock_gets_there(write_scenario, seed):
    path = write_scenario(
        """\
        machine: {nodes: 1, cores: 4}
        steps:
          - at: 0
            submit: {name: a, nodes: 1, cores: 4, runtime: 10}
          - at: 1
            submit: {name: b, nodes: 1, cores: 4, runtime: 10}
        expect:
          at:
            - time: 5
              jobs:
                a: {state: RUN}
                b: {state: RUN}
            - time: 15
              jobs:
                b: {state: RUN, started_at: 10}
        """
    )
    result = run_scenario(path, seed)
    assert result.failures == ["expect.at[0] (t=5) b: state: is SCHED, expected RUN"]
    assert any("UNMET expect.at[0]" in line for line in result.transcript_lines())


def test_every_job_expectation_kind(write_scenario, seed):
    path = write_scenario(
        """\
        machine: {nodes: 2, cores: 4}
        steps:
          - submit: {name: a, nodes: 1, cores: 4, runtime: 10}
          - submit: {name: nope, nodes: 3, cores: 4}
        expect:
          jobs:
            a:
              state: INACTIVE
              result: completed
              started_at: 0
              ended_at: 10
              annotations: null
              annotations_include: {}
              annotations_absent: [sched.t_estimate]
              ranks: 0
            nope:
              result: denied
              denied: unsatisfiable
              exception: alloc
              started_at: null
        """
    )
    result = run_scenario(path, seed)
    assert result.passed, result.reasons()


def test_wrong_expectations_each_give_a_sentence(write_scenario, seed):
    path = write_scenario(
        """\
        machine: {nodes: 2, cores: 4}
        steps:
          - submit: {name: a, nodes: 1, cores: 4, runtime: 10}
        expect:
          jobs:
            a:
              state: RUN
              result: timeout
              started_at: 1
              ended_at: null
              annotations: {sched: {queue: batch}}
              annotations_include: {sched: {queue: batch}}
              denied: true
              exception: timeout
              ranks: 1
        """
    )
    result = run_scenario(path, seed)
    assert result.failures == [
        "expect.jobs.a: state: is INACTIVE, expected RUN",
        "expect.jobs.a: result: is completed, expected timeout",
        "expect.jobs.a: started_at: is 0, expected 1",
        "expect.jobs.a: ended_at: is 10, expected never",
        "expect.jobs.a: annotations: are None, expected {'sched': {'queue': 'batch'}}",
        "expect.jobs.a: annotations_include: sched is missing (annotations are None)",
        "expect.jobs.a: denied: the job was not denied (result completed)",
        "expect.jobs.a: exception: no 'timeout' exception (got [])",
        "expect.jobs.a: ranks: are 0, expected 1",
    ]


def test_a_failing_step_is_reported_and_the_run_goes_on(write_scenario, seed):
    path = write_scenario(
        """\
        machine: {nodes: 1, cores: 4}
        steps:
          - submit: {name: a, nodes: 1, cores: 4, runtime: 100}
          - submit: {name: b, nodes: 1, cores: 4, runtime: 10}
          - at: 5
            update_expiration: {job: b, duration: 10}
          - at: 5
            update_expiration: {job: b, expiration: 50}
          - at: 6
            feasibility: {nodes: 2, cores: 4, expect: ok}
          - at: 6
            feasibility: {nodes: 1, cores: 4, expect: {error: nope}}
          - at: 7
            stats: {keys: [no_such_key], values: {pending_jobs: 5}}
        expect:
          jobs:
            b: {started_at: 100}
        """
    )
    result = run_scenario(path, seed)
    assert result.failures[0] == "step 3 (update_expiration): job b has not started"
    assert result.failures[1].startswith("step 4 (update_expiration): ValueError: ")
    assert result.failures[2].startswith(
        "step 5 (feasibility): expected the job to be feasible, got error "
    )
    assert result.failures[3] == (
        "step 6 (feasibility): expected an error containing 'nope', got ok"
    )
    assert result.failures[4] == (
        "step 7 (stats): stats-get: no key 'no_such_key'; pending_jobs is 1, expected 5"
    )
    assert len(result.failures) == 5


def test_resource_and_module_steps(write_scenario, seed):
    path = write_scenario(
        """\
        machine: {nodes: 2, cores: 4, expiration: 10000}
        scheduler: {args: [queue-depth=8]}
        steps:
          - at: 0
            down: 1
          - submit: {name: a, nodes: 1, cores: 4, runtime: 10}
          - submit: {name: b, nodes: 1, cores: 4, runtime: 10}
          - at: 20
            up: 1
          - at: 30
            expiration: 20000
          - at: 40
            unload:
          - at: 41
            submit: {name: c, nodes: 2, cores: 4, runtime: 10}
          - at: 50
            load: {args: [queue-depth=1]}
          - at: 60
            restart:
          - at: 61
            run_until_quiet:
        expect:
          jobs:
            a: {started_at: 0, ranks: 0}
            b: {started_at: 10, ranks: 0}
            c: {started_at: 50, ranks: 0-1}
        """
    )
    result = run_scenario(path, seed)
    assert result.passed, result.reasons()
    lines = result.transcript_lines()
    assert any("sched-ready" in line and '"limit":1' in line for line in lines)
    assert any('"expiration":1767245600.0' in line for line in lines)


def test_restart_with_bad_args_is_an_unmet_step(write_scenario, seed):
    path = write_scenario("steps:\n  - at: 5\n    restart: {args: [queue-depth=0]}\n")
    result = run_scenario(path, seed)
    (failure,) = result.failures
    assert failure.startswith("step 1 (restart): the scheduler failed to load again")
    assert "queue-depth='0' is invalid" in failure


def test_a_scheduler_that_fails_to_load_is_a_load_error(write_scenario, seed):
    result = run_scenario(write_scenario("description: x\n"), seed, ["queue-depth=x"])
    assert not result.passed
    assert result.load_error.startswith("the scheduler failed to load: ")
    assert "queue-depth='x' is invalid" in result.load_error
    assert result.reasons() == [result.load_error]


def test_a_missing_scheduler_file_is_a_load_error(write_scenario, tmp_path):
    missing = str(tmp_path / "nowhere.py")
    result = run_scenario(write_scenario("description: x\n"), missing)
    assert "No such file or directory" in result.load_error


def test_scheduler_path_is_relative_to_the_scenario_file(tmp_path, seed):
    (tmp_path / "sched.py").write_text(open(seed).read())
    path = tmp_path / "s.yaml"
    path.write_text("scheduler: {path: sched.py}\n")
    result = run_scenario(path)
    assert result.passed
    assert "module load sched" in result.transcript_lines()[0]


def test_no_scheduler_at_all_is_a_scenario_error(write_scenario):
    with pytest.raises(ScenarioError, match="scheduler.path: no scheduler"):
        run_scenario(write_scenario("description: x\n"))


def test_command_line_args_replace_scenario_args_by_key(write_scenario, seed):
    path = write_scenario("scheduler: {args: [queue-depth=2, log-level=info]}\n")
    result = run_scenario(path, seed, ["queue-depth=3", "log-level=debug"])
    first = result.transcript_lines()[0]
    assert "['queue-depth=3', 'log-level=debug']" in first


def test_times_are_relative_to_the_broker_epoch(write_scenario, seed):
    path = write_scenario(
        """\
        broker: {epoch: 1000000, seed: 3}
        steps:
          - at: 7
            submit: {name: a, nodes: 1, cores: 1, runtime: 3}
        expect:
          jobs:
            a: {started_at: 7, ended_at: 10}
        """
    )
    result = run_scenario(path, seed)
    assert result.passed, result.reasons()
    assert result.broker.clock.epoch == 1000000


def test_end_stops_the_run_there(write_scenario, seed):
    path = write_scenario(
        """\
        steps:
          - submit: {name: a, nodes: 1, cores: 1, runtime: 100}
        end: 50
        expect:
          jobs:
            a: {state: RUN, ended_at: null}
        """
    )
    result = run_scenario(path, seed)
    assert result.passed, result.reasons()
    assert result.broker.elapsed == 50


@pytest.mark.parametrize("path", library_paths(), ids=lambda p: p.stem)
def test_two_runs_give_byte_identical_transcripts(path, seed):
    first = run_scenario(path, seed).transcript_jsonl()
    second = run_scenario(path, seed).transcript_jsonl()
    assert first == second
    for line in first.splitlines():
        json.loads(line)


def test_partially_released_running_job(make_broker_with_seed):
    broker = make_broker_with_seed
    jobs = broker.jobs
    R = broker.resources.R
    jobid = jobs.add_running(R, make_jobspec(nodes=4, slots=4), released="0-1")
    job = jobs.job(jobid)
    assert job.state == "INACTIVE" and job.result == "completed"
    assert jobs.allocated_ranks() == {2: jobid, 3: jobid}
    with pytest.raises(ValueError, match="some, not all"):
        jobs.add_running(R, make_jobspec(nodes=4, slots=4), released="0-3")


@pytest.fixture
def make_broker_with_seed():
    from mock_broker.machine import Machine
    from mock_broker.runtime.broker import MockBroker

    broker = MockBroker(Machine.uniform(4, 4), release_after=5)

    Referee.attach(broker)
    yield broker
    broker.close()


SHORT_JOB = """\
machine: {nodes: 1, cores: 4}
steps:
  - submit: {name: a, nodes: 1, cores: 4, runtime: 30}
expect:
  jobs:
    a: {result: completed}
"""


def test_a_scheduler_that_never_settles_is_told_what_it_kept_doing(
    write_scenario, scheduler_path, monkeypatch
):
    from conformance.scenarios import runner

    monkeypatch.setattr(runner, "SETTLE_LIMIT", 600.0)  # (a year by default)
    result = run_scenario(
        write_scenario(SHORT_JOB), scheduler_path("periodic.py:PollingStats")
    )
    [failure] = result.failures
    assert failure.startswith(
        "run: the scheduler never settled: periodic never let the instance "
        "settle: from t=30.000, when the instance's own work was done, to "
        "t=600.000, its timers sent the broker messages 10 times (the last: "
        f"kvs.lookup request from {scheduler_path('periodic.py')}:"
    )
    assert "in tick)" in failure and "set end:" not in failure


def test_a_scenario_whose_own_work_outlasts_the_limit_is_told_to_set_end(
    write_scenario, scheduler_path, monkeypatch
):
    from conformance.scenarios import runner

    monkeypatch.setattr(runner, "SETTLE_LIMIT", 600.0)
    path = write_scenario(SHORT_JOB.replace("runtime: 30", "runtime: 5000"))
    result = run_scenario(path, scheduler_path("periodic.py:PeriodicStats"))
    assert result.failures[0] == (
        "run: did not settle (still busy after 600.0 virtual seconds); "
        "set end: to stop it"
    )
