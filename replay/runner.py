"""Replay a workload against a scheduler on the mock broker.

Each job (:class:`~replay.workload.ReplayJob`) is submitted at its submit
time with its jobspec and runs for its recorded run time, cut at its
limit, as Flux ends a job at its expiration (its result is then
``timeout``).  The broker's
clock starts at the first job's submission, dated from the trace's
``UnixStartTime`` when it has one (so the scheduler sees the log's own
dates).  The result carries every job's record and the figures computed
from them (:mod:`replay.metrics`), and says why, if any job was left
unfinished.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from mock_broker.machine import Machine
from mock_broker.runtime.broker import DEFAULT_RUN_LIMIT, MockBroker
from mock_broker.runtime.clock import EPOCH
from replay import metrics as metrics_mod
from replay.metrics import Metrics
from replay.records import JobRecord, allocation_of
from replay.swf import SWFJob
from replay.workload import ReplayJob, Workload, map_jobs

#: Called with the number of jobs that have ended so far.
Progress = Callable[[int], None]


@dataclass
class ReplayResult:
    """What one replay gave: per-job records, figures, and problems."""

    scheduler: str
    module: str
    args: list[str]
    machine: Machine
    records: list[JobRecord]
    metrics: Metrics
    wall_seconds: float
    #: Unix time of the trace's second 0 (the header's UnixStartTime).
    unix_start_time: float | None = None
    #: Kinds of violation the watcher recorded (see :func:`replay`).
    violations: list[str] = field(default_factory=list)
    #: One line per reason jobs were left unfinished.
    problems: list[str] = field(default_factory=list)
    #: The scheduler's ``stats-get`` answer once the replay is over (its
    #: passes, their times, the jobs it backfilled, ...); None when it
    #: gives none.
    scheduler_stats: dict | None = None

    @property
    def total_cores(self) -> int:
        """Cores in the machine."""
        return sum(g.count * g.cores for g in self.machine.groups)


def replay(
    scheduler: str,
    jobs: Sequence[SWFJob] | Workload,
    machine: Machine,
    args: list[str] | None = None,
    label: str | None = None,
    seed: int = 0,
    watch: Callable[[MockBroker], object] | None = None,
    *,
    unix_start_time: float | None = None,
    progress: Progress | None = None,
) -> tuple[ReplayResult, MockBroker]:
    """Run *jobs* through *scheduler* on *machine*; return result and broker.

    *jobs* is a mapped :class:`~replay.workload.Workload`, or trace jobs,
    which are mapped with the default :class:`~replay.workload.JobMapping`
    (jobs larger than the machine are then left out).  *watch*, if given,
    is called with the new broker before the scheduler loads (for example
    the conformance kit's ``Referee.attach``); the result's ``violations``
    are then the kinds it recorded.  *progress* is called with the number
    of jobs ended so far, whenever it changes.  The caller closes the
    broker.

    Raises:
        ValueError: there are no jobs.
        KeyboardInterrupt: Ctrl-C was pressed; the run stops between two
            steps, never inside the scheduler's code.
        mock_broker.runtime.module_host.ModuleLoadError: the scheduler
            could not be loaded.
    """
    workload = jobs if isinstance(jobs, Workload) else map_jobs(jobs, machine)
    if not workload.jobs:
        raise ValueError("the trace has no jobs to replay")
    base = EPOCH if unix_start_time is None else float(unix_start_time)
    broker = MockBroker(machine, seed=seed, epoch=base + workload.start)
    if watch is not None:
        watch(broker)
    broker.load(scheduler, list(args or []))
    ids: list[int] = []

    def submitter(job: ReplayJob):
        def submit():
            spec = job.jobspec(machine)
            ids.append(broker.jobs.submit(spec, runtime=job.runtime, userid=job.user))

        return submit

    for job in workload.jobs:
        broker.at(base + job.submit, submitter(job))
    wall0 = time.perf_counter()
    _run(broker, workload, progress)
    wall = time.perf_counter() - wall0
    records = [
        _record(job, broker.jobs.job(jobid), base)
        for job, jobid in zip(workload.jobs, ids, strict=False)
    ]
    cores = sum(g.count * g.cores for g in machine.groups)
    observer_kinds = getattr(broker.observer, "kinds", None)
    result = ReplayResult(
        scheduler=label or scheduler,
        module=scheduler,
        args=list(args or []),
        machine=machine,
        records=records,
        metrics=metrics_mod.compute(records, cores, wall),
        wall_seconds=wall,
        unix_start_time=unix_start_time,
        violations=list(observer_kinds()) if callable(observer_kinds) else [],
        problems=_problems(broker, workload, records),
    )
    # Asked last: the request runs the broker a little further.
    result.scheduler_stats = scheduler_stats(broker)
    return result, broker


def scheduler_stats(broker: MockBroker) -> dict | None:
    """The scheduler's ``stats-get`` answer, or None when it gives none (no
    such service, an error, no answer within a minute of virtual time, no
    module left)."""
    try:
        stats = broker.stats()
    except (KeyError, OSError, TimeoutError):
        return None
    return stats if isinstance(stats, dict) else None


@contextlib.contextmanager
def _graceful_interrupt() -> Iterator[Callable[[], bool]]:
    """Catch Ctrl-C between broker steps rather than inside scheduler code.

    Module callbacks run on this thread: a KeyboardInterrupt raised in one
    ends the run in the middle of a callback (the reactor passes it up,
    never taking it for the module's own error).  So a first Ctrl-C only
    sets a flag the run loop checks, and the run stops between two steps;
    a second one interrupts at once (a callback that never returns).  Left alone where Ctrl-C is not Python's default
    (ignored in a worker process, handled by the caller) or off the main
    thread.  Yields a function telling whether Ctrl-C was pressed.
    """
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield lambda: False
        return
    hits: list[int] = []

    def handler(signum, _frame) -> None:
        hits.append(signum)
        if len(hits) > 1:
            raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield lambda: bool(hits)
    finally:
        signal.signal(signal.SIGINT, previous)


def _run(broker: MockBroker, workload: Workload, progress: Progress | None) -> None:
    """Run the broker until nothing is left to happen, reporting progress.

    Raises:
        KeyboardInterrupt: Ctrl-C was pressed (the run stopped between
            two steps).
    """
    span = workload.jobs[-1].submit - workload.start
    stats = broker.jobs.stats
    seen = [-1]
    with _graceful_interrupt() as interrupted:

        def step() -> bool:
            if progress is not None and stats["completed"] != seen[0]:
                seen[0] = stats["completed"]
                progress(seen[0])
            return interrupted()  # else run until nothing is left

        broker.run_until_condition(step, timeout=span + DEFAULT_RUN_LIMIT)
        if interrupted():
            raise KeyboardInterrupt


def _record(job: ReplayJob, flux_job, base: float) -> JobRecord:
    """The record of *job*, from the broker's record *flux_job*."""

    def trace_time(value: float | None) -> float | None:
        return None if value is None else value - base

    result = flux_job.result
    if result is None:
        result = "pending" if flux_job.t_run is None else "running"
    elif result == "completed" and job.run > job.limit:
        result = "timeout"  # it ran for its whole limit, cut short
    return JobRecord(
        id=job.trace_id,
        submit=job.submit,
        start=trace_time(flux_job.t_run),
        end=trace_time(flux_job.t_end) if flux_job.t_run is not None else None,
        limit=job.limit,
        procs=job.procs,
        allocation=allocation_of(flux_job.R),
        result=result,
        estimate="run time" if job.estimate_is_run else "requested",
    )


def _problems(
    broker: MockBroker, workload: Workload, records: list[JobRecord]
) -> list[str]:
    """Why jobs were left unfinished, one line per reason (none if all ended)."""
    if len(records) < len(workload.jobs):
        return [
            f"{len(workload.jobs) - len(records)} jobs were never submitted "
            "(the run stopped before their submit time)"
        ]
    pending = [r for r in records if r.result == "pending"]
    running = [r for r in records if r.result == "running"]
    out = []
    if broker.scheduler is None:
        detail = broker.last_exit_detail
        out.append(
            "the scheduler module exited during the replay"
            + (f": {detail}" if detail else "")
        )
    if pending:
        first = pending[0]
        out.append(
            f"{len(pending)} jobs never started: nothing was left to happen "
            f"while they were pending (first: trace job {first.id}, "
            f"submitted at {first.submit:.0f} s, {first.procs} processors)"
        )
    if running:
        out.append(
            f"{len(running)} jobs were still running when the run limit "
            f"was reached (first: trace job {running[0].id})"
        )
    return out


__all__ = ["Progress", "ReplayResult", "replay"]
