"""Replay a workload trace against a scheduler on the mock broker.

Each trace job is submitted at its submit time (relative to the first
job's), asks for its processors as single-core slots anywhere on the
machine, has the trace's requested time as its time limit (``duration``)
and runs for its recorded run time; a job that would outrun its limit is
ended at its expiration, as in Flux.  The result carries the standard
figures of scheduling studies: mean wait, mean bounded slowdown
(threshold 10 s, Feitelson et al.), utilization and makespan.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from mock_broker.jobspec import make_jobspec
from mock_broker.machine import Machine
from mock_broker.runtime.broker import MockBroker
from replay.swf import SWFJob

#: Bounded-slowdown threshold: jobs shorter than this count as this long.
BSLD_THRESHOLD = 10.0


@dataclass
class ReplayResult:
    """Figures of one replay."""

    scheduler: str
    jobs: int
    started: int
    completed: int
    timeout: int
    denied: int
    unfinished: int
    mean_wait: float
    median_wait: float
    max_wait: float
    mean_bsld: float
    utilization: float
    makespan: float
    wall_seconds: float
    violations: list[str] = field(default_factory=list)

    def row(self) -> str:
        return (
            f"{self.scheduler:<22} {self.jobs:>6} {self.started:>6} "
            f"{self.denied:>6} {self.mean_wait:>10.0f} {self.median_wait:>9.0f} "
            f"{self.mean_bsld:>8.2f} {self.utilization:>6.1%} "
            f"{self.makespan:>10.0f} {self.wall_seconds:>7.1f} "
            f"{len(self.violations):>4}"
        )

    @staticmethod
    def header() -> str:
        return (
            f"{'scheduler':<22} {'jobs':>6} {'start':>6} {'denied':>6} "
            f"{'mean wait':>10} {'med wait':>9} {'BSLD':>8} {'util':>6} "
            f"{'makespan':>10} {'wall s':>7} {'viol':>4}"
        )


def replay(
    scheduler: str,
    jobs: list[SWFJob],
    machine: Machine,
    args: list[str] | None = None,
    label: str | None = None,
    seed: int = 0,
    watch: Callable[[MockBroker], object] | None = None,
) -> tuple[ReplayResult, MockBroker]:
    """Run *jobs* through *scheduler* on *machine*; return figures and broker.

    *watch*, if given, is called with the new broker before the scheduler
    loads (for example the conformance kit's ``Referee.attach``); the
    result's ``violations`` are then the kinds it recorded.
    """
    if not jobs:
        raise ValueError("the trace has no jobs to replay")
    broker = MockBroker(machine, seed=seed)
    if watch is not None:
        watch(broker)
    broker.load(scheduler, list(args or []))
    t0 = jobs[0].submit
    ids: list[int] = []

    def submitter(job: SWFJob):
        def submit():
            spec = make_jobspec(slots=job.procs, cores=1, duration=job.requested_time)
            ids.append(broker.jobs.submit(spec, runtime=job.run, userid=job.user))

        return submit

    for job in jobs:
        broker.at(broker.now + (job.submit - t0), submitter(job))
    wall0 = time.perf_counter()
    broker.run()
    wall = time.perf_counter() - wall0
    result = _figures(label or scheduler, broker, ids, machine, wall)
    return result, broker


def _figures(label, broker, ids, machine: Machine, wall: float) -> ReplayResult:
    records = [broker.jobs.job(i) for i in ids]
    started = [j for j in records if j.t_run is not None]
    waits = [j.t_run - j.t_submit for j in started]
    bslds = []
    busy = 0.0
    for job in started:
        ran = (job.t_end if job.t_end is not None else broker.now) - job.t_run
        wait = job.t_run - job.t_submit
        bslds.append(max(1.0, (wait + ran) / max(ran, BSLD_THRESHOLD)))
        busy += ran * sum(len(c) for c in _cores(job.R))
    first = min(j.t_submit for j in records)
    last = max((j.t_end for j in records if j.t_end is not None), default=first)
    makespan = last - first
    total_cores = sum(g.count * g.cores for g in machine.groups)
    return ReplayResult(
        scheduler=label,
        jobs=len(records),
        started=len(started),
        completed=sum(j.result == "completed" for j in records),
        timeout=sum(j.result == "timeout" for j in records),
        denied=sum(j.result == "denied" for j in records),
        unfinished=sum(j.state != "INACTIVE" for j in records),
        mean_wait=statistics.fmean(waits) if waits else 0.0,
        median_wait=statistics.median(waits) if waits else 0.0,
        max_wait=max(waits, default=0.0),
        mean_bsld=statistics.fmean(bslds) if bslds else 0.0,
        utilization=busy / (total_cores * makespan) if makespan > 0 else 0.0,
        makespan=makespan,
        wall_seconds=wall,
        violations=list(getattr(broker.observer, "kinds", list)()),
    )


def _cores(R: dict | None):
    from flux.idset import IDset

    for entry in ((R or {}).get("execution") or {}).get("R_lite", []):
        cores = IDset(entry.get("children", {}).get("core", ""))
        for _ in IDset(entry.get("rank", "")):
            yield cores
