"""Malformed scenario files raise ScenarioError naming file, step and key."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conformance.scenarios.runner import ScenarioError, load_scenario, parse_scenario

VALID = """\
description: two jobs
machine: {nodes: 2, cores: 4}
scheduler: {args: [queue-depth=2]}
running:
  - {name: old, ranks: 0, runtime: 10}
steps:
  - at: 0
    submit: {name: a, nodes: 1, cores: 4, runtime: 5}
  - after: 5
    cancel: a
expect:
  jobs:
    a: {state: INACTIVE}
"""


def test_a_valid_scenario_loads(write_scenario):
    scenario = load_scenario(write_scenario(VALID))
    assert scenario.name == "scenario"
    assert [s.action for s in scenario.steps] == ["submit", "cancel"]
    assert [s.time for s in scenario.steps] == [0.0, 5.0]
    assert scenario.scheduler_args == ["queue-depth=2"]
    assert scenario.machine.size == 2
    assert scenario.running[0].ranks == [0]


# (yaml text, step number or None, key, words in the message)
BAD = {
    "unknown top-level key": (
        "descripton: typo\n",
        None,
        "descripton",
        "unknown key",
    ),
    "unknown action": (
        "steps:\n  - at: 0\n    submit: {name: a}\n  - at: 1\n    kill: a\n",
        2,
        "kill",
        "unknown key",
    ),
    "no action": (
        "steps:\n  - at: 0\n    note: nothing\n",
        1,
        "(action)",
        "exactly one action, got none",
    ),
    "two actions": (
        "steps:\n  - at: 0\n    drain: 0\n    undrain: 0\n",
        1,
        "(action)",
        "drain, undrain",
    ),
    "bad type in submit": (
        "steps:\n  - at: 0\n    submit: {name: a, cores: four}\n",
        1,
        "submit.cores",
        "expected an integer",
    ),
    "unknown submit key": (
        "steps:\n  - at: 0\n    submit: {name: a, core: 4}\n",
        1,
        "submit.core",
        "unknown key",
    ),
    "job name not defined": (
        "steps:\n  - at: 0\n    submit: {name: a}\n  - at: 1\n    cancel: b\n",
        2,
        "cancel",
        "no job named 'b'",
    ),
    "job used before its submit": (
        "steps:\n  - at: 0\n    cancel: a\n  - at: 1\n    submit: {name: a}\n",
        1,
        "cancel",
        "no job named 'a'",
    ),
    "duplicate job name": (
        "steps:\n  - at: 0\n    submit: {name: a}\n  - at: 1\n    submit: {name: a}\n",
        2,
        "submit.name",
        "already used",
    ),
    "expectation for an undefined job": (
        "expect:\n  jobs:\n    ghost: {state: RUN}\n",
        None,
        "expect.jobs.ghost",
        "no job named 'ghost'",
    ),
    "bad state": (
        "steps:\n  - at: 0\n    submit: {name: a}\nexpect:\n  jobs:\n    a: {state: DONE}\n",
        None,
        "expect.jobs.a.state",
        "SCHED, RUN",
    ),
    "unknown expectation key": (
        "steps:\n  - at: 0\n    submit: {name: a}\nexpect:\n  jobs:\n    a: {stat: RUN}\n",
        None,
        "expect.jobs.a.stat",
        "unknown key",
    ),
    "time going backwards": (
        "steps:\n  - at: 10\n    drain: 0\n  - at: 5\n    undrain: 0\n",
        2,
        "at",
        "before the previous step",
    ),
    "at and after together": (
        "steps:\n  - at: 1\n    after: 2\n    drain: 0\n",
        1,
        "after",
        "not both",
    ),
    "negative time": (
        "steps:\n  - at: -1\n    drain: 0\n",
        1,
        "at",
        ">= 0",
    ),
    "bad idset": (
        "steps:\n  - at: 0\n    drain: 3-1\n",
        1,
        "drain",
        "not an idset",
    ),
    "urgency out of range": (
        "steps:\n  - at: 0\n    submit: {name: a}\n  - urgency: {job: a, urgency: 40}\n",
        2,
        "urgency.urgency",
        "outside 0-31",
    ),
    "unload with a value": (
        "steps:\n  - at: 0\n    unload: now\n",
        1,
        "unload",
        "takes no value",
    ),
    "feasibility without expect": (
        "steps:\n  - at: 0\n    feasibility: {nodes: 1}\n",
        1,
        "feasibility.expect",
        "is required",
    ),
    "feasibility with a bad expect": (
        "steps:\n  - at: 0\n    feasibility: {nodes: 1, expect: fine}\n",
        1,
        "feasibility.expect",
        "expected ok or",
    ),
    "slots that do not spread": (
        "steps:\n  - at: 0\n    submit: {name: a, nodes: 2, slots: 3}\n",
        1,
        "submit",
        "do not spread",
    ),
    "shorthand next to a raw jobspec": (
        "steps:\n  - at: 0\n    submit: {name: a, nodes: 1, jobspec: {}}\n",
        1,
        "submit.nodes",
        "either jobspec or",
    ),
    "update_expiration with both": (
        "steps:\n  - submit: {name: a}\n"
        "  - update_expiration: {job: a, expiration: 5, duration: 5}\n",
        2,
        "update_expiration",
        "exactly one of",
    ),
    "machine shorthand and groups": (
        "machine: {nodes: 2, cores: 4, groups: [{count: 1, cores: 4}]}\n",
        None,
        "machine.nodes",
        "either groups",
    ),
    "machine group without cores": (
        "machine: {groups: [{count: 1}]}\n",
        None,
        "machine.groups[0].cores",
        "is required",
    ),
    "scheduler args not a list": (
        "scheduler: {args: queue-depth=2}\n",
        None,
        "scheduler.args",
        "list of strings",
    ),
    "running job releasing all its ranks": (
        "running:\n  - {name: a, ranks: 0-1, released: 0-1}\n",
        None,
        "running[0].released",
        "some, not all",
    ),
    "running job outside the machine": (
        "machine: {nodes: 2, cores: 4}\nrunning:\n  - {name: a, ranks: 5}\n",
        None,
        "running[0].ranks",
        "ranks 0-1",
    ),
    "running job with ranks and R": (
        "running:\n  - {name: a, ranks: 0, R: {}}\n",
        None,
        "running[0]",
        "exactly one of ranks or R",
    ),
    "steps not a list": (
        "steps: {at: 0}\n",
        None,
        "steps",
        "list of steps",
    ),
    "step not a mapping": (
        "steps:\n  - drain\n",
        1,
        "(step)",
        "expected a mapping",
    ),
    "boolean where a number belongs": (
        "steps:\n  - at: true\n    drain: 0\n",
        1,
        "at",
        "expected a number",
    ),
    "checkpoint without time": (
        "steps:\n  - submit: {name: a}\nexpect:\n  at:\n    - jobs: {a: {state: RUN}}\n",
        None,
        "expect.at[0].time",
        "is required",
    ),
    "violations not a list": (
        "expect:\n  violations: R-overlap\n",
        None,
        "expect.violations",
        "list of strings",
    ),
    "end before the last step": (
        "steps:\n  - at: 10\n    drain: 0\nend: 5\n",
        None,
        "end",
        "before the last step",
    ),
    "not yaml": (
        "steps: [\n",
        None,
        "line",
        "not valid YAML",
    ),
    "top level not a mapping": (
        "- at: 0\n",
        None,
        "",
        "expected a mapping",
    ),
    # A zero-byte or comment-only file once passed as a scenario that
    # checks nothing.
    "empty file": ("", None, "(file)", "empty: no scenario in it"),
    "only comments": ("# to do\n\n", None, "(file)", "empty: no scenario in it"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_malformed_scenario_names_file_step_and_key(case, write_scenario):
    text, step, key, words = BAD[case]
    path = write_scenario(text, name="bad.yaml")
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    error = info.value
    assert error.path == str(path)
    assert error.step == step
    assert error.key.startswith(key), error.key
    message = str(error)
    assert message.startswith(f"{path}: ")
    if step is not None:
        assert f": step {step}: " in message
    assert words in message, message


def test_a_binary_file_is_a_scenario_error(tmp_path):
    path = tmp_path / "trace.swf.gz"
    path.write_bytes(b"\x1f\x8b\x08\x00binary")
    with pytest.raises(ScenarioError, match=r"\(file\): not a text file \(UTF-8\)$"):
        load_scenario(path)


def test_missing_file_is_a_scenario_error(tmp_path):
    with pytest.raises(ScenarioError, match="No such file"):
        load_scenario(tmp_path / "nothing.yaml")


def test_parse_scenario_names_the_given_path():
    with pytest.raises(ScenarioError, match=r"^inline: step 1: drain: "):
        parse_scenario("steps:\n  - drain: x\n", "inline")


def test_shorthand_builds_the_jobspec_flux_submit_would():
    scenario = parse_scenario(
        "steps:\n  - submit: {name: a, nodes: 2, cores: 3, gpus: 1, duration: 60,"
        " exclusive: true}\n"
    )
    (node,) = scenario.steps[0].value["jobspec"]["resources"]
    assert node["type"] == "node" and node["count"] == 2 and node["exclusive"]
    slot = node["with"][0]
    assert slot["count"] == 1
    assert {w["type"]: w["count"] for w in slot["with"]} == {"core": 3, "gpu": 1}
    system = scenario.steps[0].value["jobspec"]["attributes"]["system"]
    assert system["duration"] == 60.0


def test_after_is_relative_to_the_previous_step():
    scenario = parse_scenario(
        "steps:\n  - at: 10\n    drain: 0\n  - after: 5\n    undrain: 0\n"
        "  - undrain: 0\n"
    )
    assert [s.time for s in scenario.steps] == [10.0, 15.0, 15.0]


def test_running_job_on_whole_nodes_gets_a_matching_jobspec():
    scenario = parse_scenario(
        "machine: {nodes: 4, cores: 8}\nrunning:\n  - {name: a, ranks: 1-2}\n"
    )
    (node,) = scenario.running[0].jobspec["resources"]
    assert node["count"] == 2 and node["exclusive"] is True
    assert node["with"][0]["with"][0] == {"type": "core", "count": 8}


def test_loading_a_scenario_installs_nothing():
    code = (
        "import sys\n"
        "from conformance.scenarios.runner import library_paths, load_scenario\n"
        "for path in library_paths():\n"
        "    load_scenario(path)\n"
        "assert 'flux' not in sys.modules, 'flux was imported'\n"
        "assert 'mock_broker.runtime.broker' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
