"""From trace jobs to a workload of Flux jobs on a machine.

The mapping (documented in ``docs/replay.rst``):

- The machine is ``--nodes`` nodes of ``--cores-per-node`` cores (and
  optional GPUs); what the options leave open comes from the trace's
  header: ``MaxNodes`` nodes, ``MaxProcs / MaxNodes`` cores each, or
  ``MaxProcs`` spread over nodes of the given size (:func:`machine_for`).
- A job asks for its processors (requested, or allocated where the
  request is unknown) as one-core slots anywhere on the machine, or, with
  ``whole_nodes``, for as many whole nodes as those processors fill
  (exclusively, with all their GPUs).
- Its time limit (``duration``) is the user's requested time; where the
  trace does not know it, or always with ``exact_estimates``, the run
  time stands in.  A limit is at least :data:`MIN_LIMIT` seconds (0 would
  mean *no limit* to Flux).
- It runs for its recorded run time, and ends at the earlier of that and
  its limit (Flux ends a job at its expiration).
- A job larger than the machine can never run: it is reported and left
  out (:attr:`Workload.never_fit`), not submitted to be denied.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from mock_broker.jobspec import make_jobspec
from mock_broker.machine import Machine
from replay.swf import SWFJob, SWFTrace, Window, read_swf

#: The smallest time limit a replayed job gets (seconds): a job whose
#: estimate is 0 (it ran for 0 s and had no requested time) must still
#: have a limit, as 0 means unlimited in a jobspec.
MIN_LIMIT = 1.0


class NothingToReplay(ValueError):
    """The selection leaves no job to replay; the message says why."""


class NoMachineSize(ValueError):
    """Neither the options nor the trace's header give the machine's size."""


@dataclass(frozen=True)
class JobMapping:
    """How trace jobs become Flux jobs (see the module docstring)."""

    whole_nodes: bool = False
    exact_estimates: bool = False


@dataclass(frozen=True)
class ReplayJob:
    """A trace job as it is replayed.

    Times are in the trace's seconds.  *key* is the job's index in the
    workload (trace ids need not be unique across a log's parts).
    """

    key: int
    trace_id: int
    submit: float
    run: float
    limit: float
    procs: int
    #: Whole nodes asked for (``whole_nodes``), else None: one-core slots.
    nodes: int | None
    user: int
    #: True when the run time stands in for the requested time.
    estimate_is_run: bool

    @property
    def runtime(self) -> float:
        """How long it runs: its run time, cut at its limit (as Flux ends
        a job at its expiration, whether or not the scheduler stamped one)."""
        return min(self.run, self.limit)

    def jobspec(self, machine: Machine) -> dict:
        """The RFC 14 jobspec this job is submitted with."""
        if self.nodes is None:
            return make_jobspec(slots=self.procs, cores=1, duration=self.limit)
        group = machine.groups[0]
        return make_jobspec(
            nodes=self.nodes,
            slots=self.nodes,
            cores=group.cores,
            gpus=group.gpus,
            duration=self.limit,
            exclusive=True,
        )


@dataclass(frozen=True)
class NeverFits:
    """A trace job that asks for more than the machine has."""

    trace_id: int
    procs: int
    why: str


@dataclass
class Workload:
    """The jobs to replay, in submission order, and what was left out."""

    jobs: list[ReplayJob]
    never_fit: list[NeverFits] = field(default_factory=list)

    @property
    def estimated_from_run(self) -> int:
        """Jobs whose run time stands in for their requested time."""
        return sum(job.estimate_is_run for job in self.jobs)

    @property
    def start(self) -> float:
        """The first job's submit time (trace seconds)."""
        return self.jobs[0].submit if self.jobs else 0.0


def machine_for(
    trace: SWFTrace,
    nodes: int | None = None,
    cores_per_node: int | None = None,
    gpus_per_node: int = 0,
) -> tuple[Machine, str]:
    """The machine to replay *trace* on, and where its size came from.

    Options win; the header fills in the rest: with neither option,
    ``MaxNodes`` nodes of ``MaxProcs / MaxNodes`` cores (when that
    divides) or ``MaxProcs`` one-core nodes; with only the cores, as many
    nodes as hold ``MaxProcs``; with only the nodes, ``MaxProcs / nodes``
    cores when that divides, else one core.

    Raises:
        NoMachineSize: no ``--nodes`` and no usable header field.
    """
    max_nodes, max_procs = trace.max_nodes, trace.max_procs
    source = "options"
    if nodes is None and cores_per_node is None:
        if max_nodes and max_procs and max_procs % max_nodes == 0:
            nodes, cores_per_node = max_nodes, max_procs // max_nodes
            source = "the header's MaxNodes and MaxProcs"
        elif max_procs:
            nodes, cores_per_node = max_procs, 1
            source = "the header's MaxProcs"
        elif max_nodes:
            nodes, cores_per_node = max_nodes, 1
            source = "the header's MaxNodes"
    elif nodes is None:
        if max_procs:
            nodes = math.ceil(max_procs / cores_per_node)
            source = "the header's MaxProcs and --cores-per-node"
        elif max_nodes:
            nodes = max_nodes
            source = "the header's MaxNodes and --cores-per-node"
    elif cores_per_node is None:
        if max_procs and max_procs % nodes == 0:
            cores_per_node = max_procs // nodes
            source = "--nodes and the header's MaxProcs"
        else:
            cores_per_node = 1
    if nodes is None:
        raise NoMachineSize(
            f"{trace.path}: the header gives no MaxNodes or MaxProcs; "
            "give the machine's size with --nodes (and --cores-per-node)"
        )
    return Machine.uniform(nodes, cores_per_node, gpus=gpus_per_node), source


def map_jobs(
    jobs: Sequence[SWFJob], machine: Machine, mapping: JobMapping = JobMapping()
) -> Workload:
    """Map trace *jobs* onto *machine* (see the module docstring)."""
    if len({(g.cores, g.gpus) for g in machine.groups}) != 1:
        raise ValueError("replay machines have identical nodes")
    nodes_total = machine.size
    cores_per_node = machine.groups[0].cores
    cores_total = nodes_total * cores_per_node
    workload = Workload([])
    for job in jobs:
        nodes = None
        if mapping.whole_nodes:
            nodes = math.ceil(job.procs / cores_per_node)
            if nodes > nodes_total:
                workload.never_fit.append(
                    NeverFits(
                        job.job_id,
                        job.procs,
                        f"{nodes} nodes, the machine has {nodes_total}",
                    )
                )
                continue
        elif job.procs > cores_total:
            workload.never_fit.append(
                NeverFits(
                    job.job_id,
                    job.procs,
                    f"{job.procs} cores, the machine has {cores_total}",
                )
            )
            continue
        estimate_is_run = mapping.exact_estimates or job.requested_time <= 0
        limit = job.run if estimate_is_run else job.requested_time
        workload.jobs.append(
            ReplayJob(
                key=len(workload.jobs),
                trace_id=job.job_id,
                submit=job.submit,
                run=job.run,
                limit=max(limit, MIN_LIMIT),
                procs=job.procs,
                nodes=nodes,
                user=job.user,
                estimate_is_run=estimate_is_run,
            )
        )
    return workload


def check_selection(trace: SWFTrace, skip: int = 0) -> None:
    """Raise :class:`NothingToReplay` with the reason if *trace* (read
    with a window and *skip*) has no job left."""
    if trace.jobs:
        return
    name = trace.path
    if trace.records == 0:
        if trace.header:
            raise NothingToReplay(f"{name}: the trace has a header but no job records")
        raise NothingToReplay(f"{name}: the trace is empty (no job records)")
    usable = trace.records - trace.unusable - trace.malformed
    if usable == 0:
        raise NothingToReplay(
            f"{name}: none of its {trace.records} records can be replayed "
            f"({trace.unusable} unusable, {trace.malformed} malformed)"
        )
    if trace.outside_window == usable:
        raise NothingToReplay(f"{name}: no job is submitted in the window")
    raise NothingToReplay(
        f"{name}: --skip {skip} passes over all {trace.passed_over} jobs "
        "there are to replay"
    )


@dataclass
class ReplayInput:
    """A trace read, selected and mapped: everything a replay starts from."""

    trace: SWFTrace
    machine: Machine
    #: Where the machine's size came from (options, header fields).
    machine_source: str
    mapping: JobMapping
    workload: Workload
    window: Window | None = None
    skip: int = 0
    limit: int | None = None

    def selection(self) -> dict:
        """The selection options, for the JSON result."""
        return {
            "window": None if self.window is None else str(self.window),
            "skip": self.skip,
            "limit": self.limit,
        }


def prepare(
    path: str,
    *,
    window: Window | None = None,
    skip: int = 0,
    limit: int | None = None,
    skip_malformed: bool = False,
    nodes: int | None = None,
    cores_per_node: int | None = None,
    gpus_per_node: int = 0,
    mapping: JobMapping = JobMapping(),
) -> ReplayInput:
    """Read the trace at *path*, select its jobs (*window*, then *skip*,
    then *limit*), size the machine and map the jobs onto it.

    Raises:
        OSError: the trace cannot be opened.
        replay.swf.SWFError: a malformed line or a broken gzip file.
        NoMachineSize: the machine's size is not known.
        NothingToReplay: no job is left to replay, and why.
    """
    trace = read_swf(
        path, limit=limit, skip=skip, window=window, skip_malformed=skip_malformed
    )
    check_selection(trace, skip)
    machine, source = machine_for(trace, nodes, cores_per_node, gpus_per_node)
    workload = map_jobs(trace.jobs, machine, mapping)
    if not workload.jobs:
        first = workload.never_fit[0]
        raise NothingToReplay(
            f"{path}: every selected job asks for more than the machine has "
            f"(trace job {first.trace_id}: {first.why})"
        )
    return ReplayInput(trace, machine, source, mapping, workload, window, skip, limit)


__all__ = [
    "MIN_LIMIT",
    "JobMapping",
    "NeverFits",
    "NoMachineSize",
    "NothingToReplay",
    "ReplayInput",
    "ReplayJob",
    "Workload",
    "check_selection",
    "machine_for",
    "map_jobs",
    "prepare",
]
