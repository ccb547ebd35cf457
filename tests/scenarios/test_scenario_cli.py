"""``flux-schedkit run`` and ``flux-schedkit scenarios``: output and exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conformance.scenarios.runner import library_paths
from flux_schedkit import cli

PASSING = """\
description: one job runs
machine: {nodes: 1, cores: 4}
steps:
  - submit: {name: a, nodes: 1, cores: 4, runtime: 10}
expect:
  jobs:
    a: {result: completed, ended_at: 10}
"""

FAILING = PASSING.replace("ended_at: 10", "ended_at: 11")


def test_run_passing_scenario_exits_0(write_scenario, seed, capsys):
    path = write_scenario(PASSING, "pass.yaml")
    assert cli.main(["run", f"--scheduler={seed}", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"== pass ({path})" in out
    assert "sched.alloc" in out  # the transcript
    assert out.splitlines()[-1] == f"PASS  pass ({path})"


def test_run_quiet_prints_only_the_verdict(write_scenario, seed, capsys):
    path = write_scenario(PASSING, "pass.yaml")
    assert cli.main(["run", "--quiet", "--scheduler", seed, str(path)]) == 0
    assert capsys.readouterr().out == f"PASS  pass ({path})\n"


def test_run_failing_scenario_exits_1_with_reasons(write_scenario, seed, capsys):
    path = write_scenario(FAILING, "fail.yaml")
    assert cli.main(["run", "-q", "--scheduler", seed, str(path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "  - expect.jobs.a: ended_at: is 10, expected 11",
        f"FAIL  fail ({path}): 1 problem",
    ]


def test_run_reports_violations_with_the_transcript_excerpt(
    write_scenario, scheduler_path, capsys
):
    name = "hello-running-jobs"
    args = ["run", "-q", "--scheduler", scheduler_path("forgetful_hello.py"), name]
    assert cli.main(args) == 1
    out = capsys.readouterr().out
    assert "  - [R-overlap] at t=0.000:" in out
    assert "    transcript around #" in out
    assert "    >> " in out
    assert out.splitlines()[-1].startswith(f"FAIL  {name} (")


def test_several_scenarios_get_one_verdict_each_and_a_summary(
    write_scenario, seed, capsys
):
    good = write_scenario(PASSING, "good.yaml")
    bad = write_scenario(FAILING, "bad.yaml")
    assert cli.main(["run", "-q", "--scheduler", seed, str(good), str(bad)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"PASS  good ({good})"
    assert out[-2] == f"FAIL  bad ({bad}): 1 problem"
    assert out[-1] == "2 scenarios: 1 passed, 1 failed, 0 could not run"


def test_scenario_file_error_exits_2_naming_file_step_and_key(
    write_scenario, seed, capsys
):
    good = write_scenario(PASSING, "good.yaml")
    bad = write_scenario("steps:\n  - at: 0\n    explode: a\n", "broken.yaml")
    assert cli.main(["run", "--scheduler", seed, str(good), str(bad)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # nothing runs when a file is broken
    assert f"{bad}: step 1: explode: unknown key" in captured.err


def test_missing_scenario_file_exits_2(tmp_path, seed, capsys):
    assert cli.main(["run", "--scheduler", seed, str(tmp_path / "no.yaml")]) == 2
    assert "No such file" in capsys.readouterr().err


def test_no_scheduler_anywhere_exits_2(write_scenario, capsys):
    path = write_scenario(PASSING)
    assert cli.main(["run", str(path)]) == 2
    captured = capsys.readouterr()
    assert "scheduler.path: no scheduler" in captured.err
    assert captured.out.startswith("ERROR scenario")


def test_scheduler_that_fails_to_load_exits_2_with_its_message(
    write_scenario, seed, capsys
):
    path = write_scenario(PASSING)
    status = cli.main(
        ["run", "-q", "--scheduler", seed, "--args", "queue-depth=0", str(path)]
    )
    assert status == 2
    captured = capsys.readouterr()
    assert "the scheduler failed to load: " in captured.err
    assert "queue-depth='0' is invalid" in captured.err
    assert "ERROR scenario" in captured.out


def test_missing_scheduler_file_exits_2(write_scenario, tmp_path, capsys):
    path = write_scenario(PASSING)
    status = cli.main(["run", "--scheduler", str(tmp_path / "none.py"), str(path)])
    assert status == 2
    assert "No such file or directory" in capsys.readouterr().err


def test_usage_errors_exit_2(capsys):
    assert cli.main(["run"]) == 2
    assert "SCENARIO" in capsys.readouterr().err
    assert cli.main(["run", "--args", "'unbalanced", "x.yaml"]) == 2
    assert "--args" in capsys.readouterr().err


def test_args_option_reaches_the_module(write_scenario, seed, capsys):
    path = write_scenario(PASSING)
    args = ["run", "--scheduler", seed, "--args", "queue-depth=2 log-level=debug"]
    assert cli.main([*args, str(path)]) == 0
    out = capsys.readouterr().out
    assert "module load seed_minimal ['queue-depth=2', 'log-level=debug']" in out
    assert '"mode":"limited","limit":2' in out


def test_transcript_option_writes_json_lines(write_scenario, seed, tmp_path, capsys):
    good = write_scenario(PASSING, "good.yaml")
    other = write_scenario(FAILING, "other.yaml")
    out = tmp_path / "t.jsonl"
    args = ["run", "-q", "--scheduler", seed, "--transcript", str(out)]
    assert cli.main([*args, str(good), str(other)]) == 1
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert {r["scenario"] for r in records} == {"good", "other"}
    good_records = [r for r in records if r["scenario"] == "good"]
    assert [r["seq"] for r in good_records] == list(range(len(good_records)))
    assert {"seq", "t", "kind", "from", "to", "topic"} <= set(good_records[0])
    allocs = [r for r in good_records if r["topic"] == "sched.alloc"]
    assert allocs and allocs[0]["payload"]["jobspec"]["version"] == 1


def test_transcript_file_is_byte_identical_across_processes(seed, tmp_path):
    outputs = []
    for hashseed in ("0", "12345"):
        out = tmp_path / f"t{hashseed}.jsonl"
        env = dict(os.environ, PYTHONHASHSEED=hashseed)
        names = ["limited-mode-withdrawal", "hello-partial-free"]
        subprocess.run(
            [
                sys.executable,
                "-m",
                "flux_schedkit",
                "run",
                "-q",
                "--scheduler",
                seed,
                "--transcript",
                str(out),
                *names,
            ],
            check=True,
            env=env,
            capture_output=True,
        )
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]
    assert outputs[0]


def test_library_scenarios_run_by_name(seed, capsys):
    assert cli.main(["run", "-q", "--scheduler", seed, "shrink"]) == 0
    assert capsys.readouterr().out.startswith("PASS  shrink (")


def test_scenarios_lists_the_library(capsys):
    assert cli.main(["scenarios"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [str(p) for p in library_paths()]
    assert all(os.path.isfile(line) for line in out)


def test_scenarios_describe(capsys):
    assert cli.main(["scenarios", "--describe"]) == 0
    out = capsys.readouterr().out
    assert "    Hello with running jobs." in out


@pytest.mark.parametrize("command", ["run", "scenarios"])
def test_help_of_the_new_commands(command, capsys):
    assert cli.main([command, "--help"]) == 0
    assert "usage: flux-schedkit " + command in capsys.readouterr().out
