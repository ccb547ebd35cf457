"""Probes of the scale suite (see :mod:`conformance.probes`).

``scale.completes``
    A seeded workload of :data:`JOBS` jobs (10,000) on :data:`NODES` nodes
    of :data:`CORES` cores: sub-node, whole-node and multi-node jobs with
    time limits from ten minutes to four hours, most ending early, a few
    overrunning their limit, arriving as a Poisson stream that offers
    :data:`LOAD` of the machine's capacity, so it is busy while the queue
    stays moderate.  Every job must run to completion (or to its time
    limit), and the workload must go at :data:`MIN_JOBS_PER_SECOND` or
    better.  The rate is counted in CPU seconds of the probe's process
    (the scheduler runs in it, in lock-step with the broker), so a loaded
    machine does not fail a scheduler that a quiet one would pass.  A run
    that, after :data:`EARLY_CPU` seconds, is on course for more than twice
    the budget is stopped, so the probe reports before the runner's wall
    budget kills it.

Statistics in ``ctx.stats``: jobs, jobs done, wall and CPU seconds and the
jobs per second of each; the wall time of the scheduler's reactor
iterations (count, mean, p95 to within 1%, max, total: one iteration runs
the callbacks that are ready; :func:`time.perf_counter` around the module's
``reactor.iterate``, the mock broker itself unchanged); the job-manager's
queue length (mean, max), the core utilization over the run, and the
numeric figures of the scheduler's own ``stats-get`` (pass counts and
times, for schedulers that report them).
"""

from __future__ import annotations

import math
import random
import statistics
import time

from conformance.findings import Finding
from conformance.probes import ProbeContext, probe
from mock_broker.jobmanager.jobs import R_lite_entries, idset_members
from mock_broker.jobspec import make_jobspec
from mock_broker.machine import Machine

SCALE = "scale.completes"

#: Jobs in the workload.
JOBS = 10_000
#: The machine: nodes and cores per node.
NODES, CORES = 128, 16
#: Offered load: the work arriving per second over the machine's capacity.
LOAD = 0.6
#: The workload must go at least this fast (jobs per CPU second): 10,000
#: jobs in 200 s.
MIN_JOBS_PER_SECOND = 50.0
#: After this many CPU seconds a run is stopped early if, at its recent
#: pace, it would take more than twice the budget.
EARLY_CPU = 2.0
#: Share of the runner's wall budget for the probe (if it gives one) after
#: which the run is stopped and judged.
WALL_SHARE = 0.8
#: Progress checks (CPU time, completion) over the arrival period.
CHECKS = 400
#: Virtual seconds allowed after the last arrival for the queue to drain.
DRAIN_LIMIT = 30 * 86400.0

_LIMITS = (600.0, 1800.0, 3600.0, 7200.0, 14400.0)


def workload(seed: int, jobs: int = JOBS) -> list[tuple[float, dict, float]]:
    """``(arrival, jobspec, runtime)`` for *jobs* jobs, arrivals in virtual
    seconds from the start, reproducible from *seed*."""
    rng = random.Random(seed)
    out = []
    work = 0.0  # node-seconds
    for _ in range(jobs):
        limit = rng.choice(_LIMITS)
        kind = rng.random()
        if kind < 0.35:
            cores = rng.choice((1, 2, 4, 8))
            slots = rng.choice((1, 1, 2, 4))
            spec = make_jobspec(slots=slots, cores=cores, duration=limit)
            nodes = slots * cores / CORES
        elif kind < 0.65:
            spec = make_jobspec(nodes=1, slots=1, cores=CORES, duration=limit)
            nodes = 1
        elif kind < 0.90:
            nodes = rng.choice((2, 3, 4, 6, 8))
            spec = make_jobspec(nodes=nodes, slots=nodes, cores=CORES, duration=limit)
        elif kind < 0.98:
            nodes = rng.choice((16, 24, 32))
            spec = make_jobspec(nodes=nodes, slots=nodes, cores=CORES, duration=limit)
        else:
            nodes = NODES // 2
            spec = make_jobspec(nodes=nodes, slots=nodes, cores=CORES, duration=limit)
        if rng.random() < 0.03:
            runtime = limit * 1.2  # overruns: ends at its time limit
        else:
            runtime = limit * rng.uniform(0.05, 1.0)
        work += nodes * min(runtime, limit)
        out.append((0.0, spec, runtime))
    # Poisson arrivals at the rate that offers LOAD of the machine.
    rate = jobs * LOAD * NODES / work  # jobs per virtual second
    t = 0.0
    for i, (_, spec, runtime) in enumerate(out):
        t += rng.expovariate(rate)
        out[i] = (t, spec, runtime)
    return out


class _Progress:
    """Decides, from CPU time and the workload's progress, when a run is
    hopeless.

    Progress is counted in arrivals handled (every job costs the scheduler
    its alloc, its start and its free, and the broker runs the workload in
    virtual-time order).  The pace is the CPU time per arrival since the
    last check at or before half the CPU time spent so far, so a scheduler
    whose passes get slower as it goes (work that grows with the jobs seen)
    is projected at its current pace, not its average one.

    If the runner says how much wall time the probe has (``probe_wall`` in
    the probe's limits), the run also stops at :data:`WALL_SHARE` of it,
    so the verdict is this clause's rather than a killed probe's.
    """

    def __init__(self, njobs: int, budget: float, probe_wall: float | None):
        self.njobs, self.budget = njobs, budget
        self.wall_limit = WALL_SHARE * probe_wall if probe_wall else None
        self.cpu0, self.wall0 = time.process_time(), time.perf_counter()
        self.samples: list[tuple[float, int]] = [(0.0, 0)]

    def check(self, arrived: int, done: int) -> str | None:
        """None to go on, or why the run is stopped."""
        cpu = time.process_time() - self.cpu0
        wall = time.perf_counter() - self.wall0
        self.samples.append((cpu, arrived))
        if self.wall_limit is not None and wall > self.wall_limit:
            return (
                f"stopped near the probe's wall budget: {wall:.0f} s of wall "
                f"time ({cpu:.1f} CPU seconds) with {done} of {self.njobs} jobs "
                "done"
            )
        if cpu > self.budget:
            return (
                f"over budget: {cpu:.1f} CPU seconds spent with {done} of "
                f"{self.njobs} jobs done (budget {self.budget:.0f} s, "
                f"{MIN_JOBS_PER_SECOND:g} jobs per CPU second)"
            )
        if cpu < EARLY_CPU:
            return None
        half_cpu, half_arrived = [s for s in self.samples if s[0] <= cpu / 2][-1]
        if arrived > half_arrived:
            pace = (cpu - half_cpu) / (arrived - half_arrived)
        else:
            pace = math.inf
        if cpu + (self.njobs - arrived) * pace <= 2 * self.budget:
            return None
        if math.isinf(pace):
            recent = f"no job arrived in the last {cpu - half_cpu:.1f} CPU seconds"
        else:
            recent = f"the last ones cost {pace * 1000:.1f} ms of CPU each"
        return (
            f"stopped early: after {cpu:.1f} CPU seconds {arrived} of "
            f"{self.njobs} jobs have arrived ({done} done) and {recent}; at "
            f"that pace the workload needs over twice the budget of "
            f"{self.budget:.0f} s ({MIN_JOBS_PER_SECOND:g} jobs per CPU second)"
        )


class _Stopped(Exception):
    """A check made between two reactor iterations stopped the run."""


#: Wall seconds between the progress checks made between reactor
#: iterations (see :meth:`_IterationTimer.watch`).
CHECK_EVERY = 0.5


class _IterationTimer:
    """Wall time of each reactor iteration of one module (wraps
    ``link.reactor.iterate``; the mock broker itself is not changed).

    Kept in bounded memory: count, total and maximum exactly, the 95th
    percentile from a histogram of buckets 1% wide (its upper edge, so at
    most 1% above the exact value).  A module whose pass never ends but
    yields iterates its reactor millions of times; a list of every
    iteration's time then grew until the kit's own record failed the
    module on ``robust.memory``.
    """

    #: Ratio of a histogram bucket's upper edge to its lower edge.
    BUCKET = 1.01

    def __init__(self, link):
        self.count = 0
        self.total = 0.0
        self.max = 0.0
        self.buckets: dict[int, int] = {}  # floor(log(wall, BUCKET)) -> count
        self._check = None
        self._next_check = math.inf
        reactor = link.reactor
        inner = reactor.iterate
        clock = time.perf_counter
        log_bucket = math.log(self.BUCKET)

        def iterate():
            t0 = clock()
            try:
                result = inner()
            finally:
                t1 = clock()
                wall = t1 - t0
                self.count += 1
                self.total += wall
                if wall > self.max:
                    self.max = wall
                key = math.floor(math.log(wall) / log_bucket) if wall > 0.0 else None
                self.buckets[key] = self.buckets.get(key, 0) + 1
            if t1 >= self._next_check:
                self._next_check = t1 + CHECK_EVERY
                reason = self._check()
                if reason:
                    raise _Stopped(reason)
            return result

        reactor.iterate = iterate

    def watch(self, check) -> None:
        """Call *check* (no arguments: None to go on, or why the run
        stops) between two iterations every :data:`CHECK_EVERY` wall
        seconds, and raise :class:`_Stopped` with its reason (*check*
        None: no more checks).  A module whose pass never ends but yields
        keeps the broker at one virtual instant, so the checks made between
        the broker's steps never come."""
        self._check = check
        self._next_check = math.inf
        if check is not None:
            self._next_check = time.perf_counter() + CHECK_EVERY

    def summary(self) -> dict:
        if not self.count:
            return {"count": 0}
        wanted = max(1, math.ceil(0.95 * self.count))
        p95, seen = 0.0, self.buckets.get(None, 0)  # iterations timed as 0 s
        if seen < wanted:
            for key in sorted(k for k in self.buckets if k is not None):
                seen += self.buckets[key]
                if seen >= wanted:
                    p95 = min(self.BUCKET ** (key + 1), self.max)
                    break
        return {
            "count": self.count,
            "mean": self.total / self.count,
            "p95": p95,
            "max": self.max,
            "total": self.total,
        }


def _numeric(stats) -> dict:
    if not isinstance(stats, dict):
        return {}
    return {
        k: v
        for k, v in stats.items()
        if isinstance(v, (int, float)) and not isinstance(v, bool)
    }


@probe(SCALE, (SCALE,), budget=300.0, cost=100)
def scale_completes(ctx: ProbeContext) -> list[Finding]:
    """The seeded 10,000-job workload completes, fast enough."""
    jobs = workload(ctx.seed, JOBS)
    broker = ctx.new_broker(Machine.uniform(NODES, CORES))
    link = ctx.load(broker)
    timer = _IterationTimer(link)
    table = broker.jobs
    arrived: list[int] = []
    start = broker.now
    for arrival, spec, runtime in jobs:
        broker.at(
            start + arrival,
            lambda s=spec, r=runtime: arrived.append(table.submit(s, runtime=r)),
        )
    last_arrival = start + jobs[-1][0]
    budget = len(jobs) / MIN_JOBS_PER_SECOND
    pending: list[int] = []
    t0, cpu0 = time.perf_counter(), time.process_time()
    progress = _Progress(len(jobs), budget, ctx.limits.get("probe_wall"))
    step = max(60.0, (last_arrival - start) / CHECKS)
    stopped = None
    timer.watch(lambda: progress.check(len(arrived), _done(table)))
    while True:
        try:
            broker.run_until(broker.now + step)
        except _Stopped as stop:
            stopped = str(stop)
            break
        pending.append(len(table.queue) + len(table.sent))
        done = _done(table)
        if done == len(jobs):
            break
        if link.state != "reactor":
            stopped = "the scheduler module exited"
        elif broker.now > last_arrival + DRAIN_LIMIT:
            stopped = (
                f"jobs still queued or running {DRAIN_LIMIT / 86400:.0f} virtual "
                "days after the last arrival"
            )
        else:
            stopped = progress.check(len(arrived), done)
        if stopped:
            break
    timer.watch(None)  # the run is over: asking for the stats is not part of it
    wall = time.perf_counter() - t0
    cpu = time.process_time() - cpu0
    done = _done(table)
    ctx.stats.update(
        jobs=len(jobs),
        jobs_done=done,
        nodes=NODES,
        cores_per_node=CORES,
        wall_seconds=wall,
        cpu_seconds=cpu,
        jobs_per_wall_second=done / wall if wall > 0 else None,
        jobs_per_cpu_second=done / cpu if cpu > 0 else None,
        virtual_seconds=broker.elapsed,
        reactor_iterations=timer.summary(),
        max_pending=max(pending, default=0),
        mean_pending=statistics.fmean(pending) if pending else 0.0,
        core_utilization=_utilization(table, broker.now - start),
        job_manager=dict(table.stats),
        scheduler_stats=_scheduler_stats(broker, link),
    )
    if stopped:
        return [ctx.fail(SCALE, stopped, broker)]
    out = []
    problems = _unfinished(table)
    if problems:
        out.append(ctx.fail(SCALE, problems, broker))
    if cpu > budget:
        out.append(
            ctx.fail(
                SCALE,
                f"{len(jobs)} jobs took {cpu:.1f} CPU seconds ({wall:.1f} s of "
                f"wall time), {len(jobs) / cpu:.1f} jobs per CPU second; the "
                f"budget is {MIN_JOBS_PER_SECOND:g} ({budget:.0f} s)",
            )
        )
    return out


def _done(table) -> int:
    return sum(1 for j in table.jobs.values() if j.state == "INACTIVE")


def _utilization(table, span: float) -> float:
    """Core-seconds the jobs held over what the machine had in *span*."""
    if span <= 0:
        return 0.0
    used = 0.0
    for job in table.jobs.values():
        if job.R is None or job.t_run is None or job.t_end is None:
            continue
        used += _cores_held(job.R) * (job.t_end - job.t_run)
    return used / (NODES * CORES * span)


def _cores_held(R) -> int:
    """Cores of the machine an R names (0 if it cannot be read: the
    referee fails such an R, and a statistic must not crash on it)."""
    try:
        return sum(
            len(idset_members((entry.get("children") or {}).get("core", ""), CORES))
            * len(idset_members(entry.get("rank", ""), NODES))
            for entry in R_lite_entries(R)
        )
    except (ValueError, TypeError, AttributeError):
        return 0


def _scheduler_stats(broker, link) -> dict:
    """The numeric fields of the scheduler's ``stats-get``, if it answers."""
    if link.state != "reactor":
        return {}
    try:
        return _numeric(broker.stats(link.name))
    except (OSError, TimeoutError):
        return {}


def _unfinished(table) -> str:
    """What went wrong with jobs that did not complete, or ''."""
    bad = [j for j in table.jobs.values() if j.result not in ("completed", "timeout")]
    if not bad:
        return ""
    first = bad[0]
    detail = first.exceptions[-1][2] if first.exceptions else first.state
    return (
        f"{len(bad)} of {len(table.jobs)} jobs did not run to completion; the "
        f"first, {first.f58}, ended {first.result or first.state} ({detail})"
    )
