"""flux_sched_base.jobspec: RFC 14 version 1 jobspecs checked strictly."""

from __future__ import annotations

import copy

import pytest

from flux_sched_base.jobspec import jobspec_problem
from mock_broker.jobspec import make_jobspec

VALID = [
    make_jobspec(nodes=2, slots=2, cores=4),
    make_jobspec(slots=3, cores=1),
    make_jobspec(nodes=1, slots=1, cores=2, gpus=1, exclusive=True, duration=60),
    make_jobspec(nodes=1, slots=1, cores=1, constraints={"properties": ["fast"]}),
]


@pytest.mark.parametrize("jobspec", VALID)
def test_what_the_project_builds_is_valid(jobspec):
    assert jobspec_problem(jobspec) is None


def _edit(path, value):
    spec = copy.deepcopy(make_jobspec(nodes=1, slots=2, cores=2, duration=60))
    node = spec
    for key in path[:-1]:
        node = node[key]
    if value is KeyError:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return spec


# Each of these is accepted by flux-python 0.88's own request parser.
@pytest.mark.parametrize(
    "path, value, words",
    [
        (("tasks",), KeyError, "no 'tasks'"),
        (("version",), KeyError, "no 'version'"),
        (("version",), "1", "version must be the integer 1"),
        (("tasks",), {}, "tasks must be a non-empty list"),
        (("resources", 0, "count"), 2.5, "count must be an integer"),
        (("resources", 0, "count"), True, "count must be an integer"),
        (("resources", 0, "count"), None, "count must be an integer"),
        (("resources", 0, "count"), [1, 2], "count must be an integer"),
        (("resources", 0, "count"), KeyError, "no count"),
        (
            ("resources", 0, "with", 0, "with"),
            [{"type": "core", "count": 2}, {"type": "fpga", "count": 1}],
            "unknown resource type 'fpga'",
        ),
        (("attributes", "system", "duration"), -60, "duration must be a number"),
        (("attributes", "system", "duration"), "60", "duration must be a number"),
        (("attributes", "system", "duration"), True, "duration must be a number"),
        (("resources", 0, "count"), {"min": 2, "max": 1}, "range max"),
        (("resources", 0, "count"), {"min": 1, "operator": "%"}, "range operator"),
        (("resources", 0, "exclusive"), "yes", "exclusive must be true or false"),
    ],
)
def test_malformed_jobspecs_are_named(path, value, words):
    problem = jobspec_problem(_edit(path, value))
    assert problem is not None and words in problem


def test_a_rack_above_nodes_and_anything_inside_a_core_are_refused():
    spec = make_jobspec(nodes=1, slots=1, cores=1)
    rack = {"type": "rack", "count": 1, "with": spec["resources"]}
    assert "unknown resource type 'rack'" in jobspec_problem(
        {**spec, "resources": [rack]}
    )
    spec["resources"][0]["with"][0]["with"][0]["with"] = [{"type": "core", "count": 1}]
    assert "expected nothing" in jobspec_problem(spec)


def test_deep_nesting_is_refused_without_recursing_far():
    vertex = {"type": "slot", "count": 1, "label": "task"}
    for _ in range(5000):
        vertex = {"type": "slot", "count": 1, "label": "task", "with": [vertex]}
    spec = {**make_jobspec(slots=1, cores=1), "resources": [vertex]}
    # Refused at the second level: no RecursionError, whatever the depth.
    assert "a slot must contain cores" in jobspec_problem(spec)


@pytest.mark.parametrize("value", ["text", None, 3, []])
def test_not_an_object(value):
    assert jobspec_problem(value).startswith("jobspec must be an object")
