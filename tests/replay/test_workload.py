"""Trace jobs as Flux jobs: the machine, the mapping and the selection."""

from __future__ import annotations

import pytest
from replay_helpers import SMALL, swf_line, write

from mock_broker.machine import Machine
from replay.swf import SWFJob, SWFTrace, Window, read_swf
from replay.workload import (
    MIN_LIMIT,
    JobMapping,
    NoMachineSize,
    NothingToReplay,
    machine_for,
    map_jobs,
    prepare,
)


def header_trace(**fields) -> SWFTrace:
    return SWFTrace("t.swf", {k: str(v) for k, v in fields.items()}, [])


def shape(machine: Machine) -> tuple[int, int, int]:
    group = machine.groups[0]
    return machine.size, group.cores, group.gpus


@pytest.mark.parametrize(
    "header, options, expected",
    [
        ({"MaxNodes": 100, "MaxProcs": 100}, {}, (100, 1, 0)),
        ({"MaxNodes": 10, "MaxProcs": 160}, {}, (10, 16, 0)),
        # MaxProcs does not divide over MaxNodes: one-core nodes.
        ({"MaxNodes": 3, "MaxProcs": 10}, {}, (10, 1, 0)),
        ({"MaxProcs": 64}, {}, (64, 1, 0)),
        ({"MaxNodes": 8}, {}, (8, 1, 0)),
        # Only the cores given: as many nodes as hold MaxProcs.
        ({"MaxNodes": 100, "MaxProcs": 100}, {"cores_per_node": 16}, (7, 16, 0)),
        # Only the nodes given: MaxProcs spread over them when it divides.
        ({"MaxProcs": 100}, {"nodes": 25}, (25, 4, 0)),
        ({"MaxProcs": 100}, {"nodes": 30}, (30, 1, 0)),
        ({}, {"nodes": 5, "cores_per_node": 2, "gpus_per_node": 4}, (5, 2, 4)),
    ],
)
def test_machine_from_options_and_header(header, options, expected):
    machine, source = machine_for(header_trace(**header), **options)
    assert shape(machine) == expected
    assert source


def test_no_machine_size_names_the_option():
    with pytest.raises(NoMachineSize, match="--nodes"):
        machine_for(header_trace())
    with pytest.raises(NoMachineSize):
        machine_for(header_trace(), cores_per_node=4)


def job(job_id=1, procs=2, run=50.0, requested=60.0, submit=0.0) -> SWFJob:
    return SWFJob(job_id, submit, 0.0, run, procs, requested, 1, 1)


def test_requested_time_is_the_limit_and_the_run_time_stands_in_when_unknown():
    jobs = [job(1, requested=60.0), job(2, requested=0.0, run=35.0)]
    workload = map_jobs(jobs, Machine.uniform(4, 1))
    assert [(j.limit, j.estimate_is_run) for j in workload.jobs] == [
        (60.0, False),
        (35.0, True),
    ]
    assert workload.estimated_from_run == 1
    exact = map_jobs(jobs, Machine.uniform(4, 1), JobMapping(exact_estimates=True))
    assert [j.limit for j in exact.jobs] == [50.0, 35.0]
    assert exact.estimated_from_run == 2


def test_a_limit_is_never_zero():
    workload = map_jobs([job(run=0.0, requested=0.0)], Machine.uniform(4, 1))
    assert workload.jobs[0].limit == MIN_LIMIT


def test_one_core_slots_by_default():
    workload = map_jobs([job(procs=3)], Machine.uniform(4, 2))
    spec = workload.jobs[0].jobspec(Machine.uniform(4, 2))
    (slot,) = spec["resources"]
    assert (slot["type"], slot["count"], slot["with"]) == (
        "slot",
        3,
        [{"type": "core", "count": 1}],
    )
    assert spec["attributes"]["system"]["duration"] == 60.0


def test_whole_nodes_fill_nodes_exclusively_with_their_gpus():
    machine = Machine.uniform(4, 4, gpus=2)
    workload = map_jobs([job(procs=5)], machine, JobMapping(whole_nodes=True))
    assert workload.jobs[0].nodes == 2
    (node,) = workload.jobs[0].jobspec(machine)["resources"]
    assert (node["type"], node["count"], node["exclusive"]) == ("node", 2, True)
    assert node["with"][0]["with"] == [
        {"type": "core", "count": 4},
        {"type": "gpu", "count": 2},
    ]


def test_jobs_that_can_never_fit_are_reported_and_left_out():
    jobs = [job(1, procs=4), job(2, procs=9), job(3, procs=2)]
    workload = map_jobs(jobs, Machine.uniform(4, 2))
    assert [j.trace_id for j in workload.jobs] == [1, 3]
    assert [j.key for j in workload.jobs] == [0, 1]
    (never,) = workload.never_fit
    assert (never.trace_id, never.procs) == (2, 9)
    assert never.why == "9 cores, the machine has 8"
    whole = map_jobs(jobs, Machine.uniform(4, 2), JobMapping(whole_nodes=True))
    assert [n.why for n in whole.never_fit] == ["5 nodes, the machine has 4"]


@pytest.mark.parametrize(
    "text, options, message",
    [
        ("", {}, "the trace is empty"),
        ("; MaxProcs: 4\n", {}, "a header but no job records"),
        (swf_line(1, 0, -1, 1, 10), {}, "none of its 1 records can be replayed"),
        (SMALL, {"window": Window(1000, None)}, "no job is submitted in the window"),
        (SMALL, {"skip": 3}, "--skip 3 passes over all 3 jobs"),
        (
            SMALL,
            {"nodes": 1, "cores_per_node": 1},
            "every selected job asks for more than the machine",
        ),
    ],
)
def test_nothing_to_replay_says_why(tmp_path, text, options, message):
    with pytest.raises(NothingToReplay, match=message):
        prepare(str(write(tmp_path, text)), **options)


def test_prepare_reads_selects_sizes_and_maps(tmp_path):
    source = prepare(str(write(tmp_path, SMALL)), skip=1, window=Window(None, 200))
    assert shape(source.machine) == (4, 1, 0)
    assert [j.trace_id for j in source.workload.jobs] == [2, 4]
    assert source.selection() == {"window": ":200", "skip": 1, "limit": None}
    assert read_swf(source.trace.path).jobs[0].job_id == 1
