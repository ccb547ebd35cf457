"""Time per scheduling pass of the reference schedulers, on queues from real traces.

A machine of 1,024 nodes x 16 cores runs about 1,000 jobs (the scheduler
learns them in its hello, as after a restart) and has 1,000, 10,000 or
100,000 more queued behind them.  Every job, running or queued, is a job
of a real trace (``--trace``: CEA-Curie or KTH-SP2 from ``../shared/traces``,
or any SWF file): its processors become 1-core slots (or whole nodes with
``--whole-nodes``), its requested time the duration limit, its run time
how long it runs.  Queued jobs get distinct priorities (seeded), so the
queue is not in submission order and no two requests are alike.

The script then lets running jobs end, one end time at a time, and times
the passes that follow: the work done inside each pass, summed over its
generator steps with ``time.perf_counter`` (``recent_pass_times`` of
``stats-get`` for the reference schedulers, the same wrapper around
``schedule()`` for flux-core's ``sched-backfill.py``).  Passes are reported
in two groups, those after an end that let nothing start (the common case
on a full machine) and those that started jobs, with the mean, 95th
percentile and maximum of each; the first pass (all jobs arriving at once
at load time) is reported on its own.

Schedulers are named ``fifo``, ``easy``, ``conservative`` (unlimited
reservation depth) or ``conservative:N`` (depth N), or ``sched-backfill``
for flux-core's own, which is not part of this repository: give the path
of a copy of flux-core's ``src/modules/sched-backfill.py`` with
``--upstream PATH`` or in ``$SCHEDKIT_UPSTREAM_BACKFILL``.

    python benchmarks/sched_pass.py [--trace curie|kth|PATH] [--whole-nodes]
        [--pending 1000 10000 100000] [--schedulers easy conservative:64 ...]
        [--passes 40] [--upstream PATH]

Exit status: 0 when every run completed; 1 when a scheduler broke RFC 27
or would not load, or the output closed early; 2 for a wrong argument
(found before anything runs) or a trace or upstream file that cannot be
used; 130 on Ctrl-C.  Each failure is one line on stderr.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import os
import random
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from conformance.referee import Referee, RefereeError
from flux_schedkit.console import EXIT_FAILED, EXIT_OK, EXIT_USAGE, guarded, say
from flux_schedkit.reference import reference_spec
from flux_schedkit.trace_options import InputError, positive, reading
from mock_broker.jobspec import make_jobspec
from mock_broker.machine import Machine
from mock_broker.runtime.broker import BrokerStalled, MockBroker
from mock_broker.runtime.module_host import ModuleLoadError
from replay.swf import SWFJob, read_swf

ROOT = Path(__file__).resolve().parent.parent
TRACES = {
    "curie": ROOT.parent / "shared" / "traces" / "CEA-Curie-2011-2.1-cln-b2.swf.gz",
    "kth": ROOT.parent / "shared" / "traces" / "KTH-SP2-1996-2.1-cln.swf.gz",
}
NODES, CORES, RUNNING = 1024, 16, 1000
#: Running jobs are drawn from trace jobs this small, so that about 1,000
#: of them fit on the machine together.
RUNNING_MAX_CORES = 32


def scheduler_target(name: str, upstream: str | None) -> tuple[str, list[str]]:
    """The load spec and module arguments for a scheduler name.

    Raises:
        InputError: an unknown name, or ``sched-backfill`` without a
            usable *upstream* file.
    """
    if name == "sched-backfill":
        if upstream is None:
            raise InputError("sched-backfill needs --upstream PATH")
        return _timed_upstream(upstream), ["queue-depth=unlimited"]
    try:
        policy, depth = reference_spec(name)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    args = ["queue-depth=unlimited"]
    if depth is not None:
        args.append(f"reservation-depth={depth}")
    return str(ROOT / "schedulers" / policy / f"schedkit-{policy}.py"), args


def trace_jobs(path: Path) -> list[SWFJob]:
    """Usable jobs of a trace (known size, run time and limit, fit the machine).

    Raises:
        InputError: the trace cannot be read, or has no usable job.
    """
    with reading(str(path)):
        jobs = read_swf(path).jobs
    usable = [
        j
        for j in jobs
        if j.requested_time > 0 and j.run > 0 and j.procs <= NODES * CORES
    ]
    if not usable:
        raise InputError(f"{path}: no usable jobs")
    return usable


def jobspec_for(job: SWFJob, whole_nodes: bool) -> dict:
    limit = float(job.requested_time)
    if whole_nodes:
        n = -(-job.procs // CORES)
        return make_jobspec(nodes=n, slots=n, cores=CORES, duration=limit)
    return make_jobspec(slots=job.procs, cores=1, duration=limit)


def _running_R(cores: list[tuple[int, list[int]]], start: float, end: float) -> dict:
    return {
        "version": 1,
        "execution": {
            "R_lite": [
                {"rank": str(rank), "children": {"core": ",".join(map(str, ids))}}
                for rank, ids in cores
            ],
            "nodelist": [f"node{rank}" for rank, _ in cores],
            "starttime": start,
            "expiration": end,
        },
    }


def build(
    target: str,
    args: list[str],
    jobs: list[SWFJob],
    pending: int,
    whole_nodes: bool,
    seed: int = 1,
) -> MockBroker:
    """About 1,000 trace jobs running, *pending* more queued, then load
    *target*: it learns the running ones in its hello and gets every
    queued one at once."""
    rng = random.Random(seed)
    broker = MockBroker(Machine.uniform(NODES, CORES), seed=seed)
    Referee.attach(broker)
    t0 = broker.now
    small = [j for j in jobs if j.procs <= RUNNING_MAX_CORES]
    free = {rank: list(range(CORES)) for rank in range(NODES)}
    rank = 0
    placed = 0
    while placed < RUNNING and rank < NODES:
        job = rng.choice(small)
        want = CORES * -(-job.procs // CORES) if whole_nodes else job.procs
        taken: list[tuple[int, list[int]]] = []
        r = rank
        while want > 0 and r < NODES:
            ids = free[r][:want]
            free[r] = free[r][len(ids) :]
            taken.append((r, ids))
            want -= len(ids)
            if not free[r]:
                r += 1
        if want > 0:
            break
        rank = r
        limit = float(job.requested_time)
        start = t0 - rng.uniform(0, min(limit, job.run) * 0.9)
        end = start + limit
        runtime = max(1.0, min(job.run, limit) - (t0 - start))
        spec = jobspec_for(job, whole_nodes)
        broker.jobs.add_running(_running_R(taken, start, end), spec, runtime=runtime)
        placed += 1
    priorities = rng.sample(range(1, 2**31), pending)
    for priority in priorities:
        job = rng.choice(jobs)
        spec = jobspec_for(job, whole_nodes)
        broker.jobs.submit(
            spec, priority=priority, runtime=min(job.run, job.requested_time)
        )
    broker.load(target, args)
    broker.run_until_quiet()
    return broker


@dataclass
class Measured:
    first: float = 0.0
    idle: list[float] = field(default_factory=list)  # passes that started nothing
    busy: list[float] = field(default_factory=list)  # passes that started jobs
    started: int = 0


def measure(broker: MockBroker, passes: int) -> Measured:
    """Let jobs end, one end time at a time; sort the passes that follow."""
    result = Measured()
    stats = broker.stats()
    recent = stats["recent_pass_times"]
    # The first pass, if it is still among the recent ones, else the longest.
    if recent and stats["passes_completed"] <= len(recent):
        result.first = recent[0]
    else:
        result.first = stats.get("max_pass_time", 0.0)
    done = stats["passes_completed"]
    while len(result.idle) + len(result.busy) < passes:
        running = broker.jobs.jobs_in("RUN")
        if not running:
            break
        ends = [min(j.t_run + j.runtime, j.expiration or float("inf")) for j in running]
        before = len(broker.jobs.jobs_in("SCHED"))
        broker.run_until(max(min(ends), broker.now))
        started = before - len(broker.jobs.jobs_in("SCHED"))
        stats = broker.stats()
        new = stats["passes_completed"] - done
        done = stats["passes_completed"]
        if new > 0:
            times = stats["recent_pass_times"][-new:]
            (result.busy if started > 0 else result.idle).extend(times)
            result.started += max(started, 0)
    return result


# -- flux-core's sched-backfill.py, timed the same way --------------------------


def _timed_upstream(path: str) -> str:
    """Import flux-core's sched-backfill.py and return a load spec for a
    subclass whose passes are timed like the reference schedulers'."""
    spec = importlib.util.spec_from_file_location("_schedkit_bench_upstream", path)
    if spec is None or spec.loader is None:
        raise InputError(f"{path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
        base = module.BackfillScheduler
    except Exception as exc:  # any failure of a file the user named
        raise InputError(
            f"{path}: not flux-core's sched-backfill.py ({type(exc).__name__}: {exc})"
        ) from None

    class TimedBackfill(base):
        def __init__(self, h, *args):
            super().__init__(h, *args)
            self._bench_times: list[float] = []
            self._bench_done = 0
            self._bench_max = 0.0

        def schedule(self):
            gen = super().schedule()
            if gen is None:
                return None
            return self._bench_timed(gen)

        def _bench_timed(self, gen):
            elapsed = 0.0
            t0 = time.perf_counter()
            try:
                for _ in gen:
                    elapsed += time.perf_counter() - t0
                    yield
                    t0 = time.perf_counter()
                elapsed += time.perf_counter() - t0
            finally:
                gen.close()
            self._bench_done += 1
            self._bench_max = max(self._bench_max, elapsed)
            self._bench_times = (self._bench_times + [elapsed])[-32:]

        def stats_get(self):
            stats = super().stats_get()
            stats["passes_completed"] = self._bench_done
            stats["recent_pass_times"] = list(self._bench_times)
            stats["max_pass_time"] = self._bench_max
            return stats

    module.TimedBackfill = TimedBackfill
    sys.modules[module.__name__] = module
    return f"{module.__name__}:TimedBackfill"


def upstream_path(given: str | None) -> str | None:
    """The sched-backfill.py to time: *given*, else
    ``$SCHEDKIT_UPSTREAM_BACKFILL``, else None.

    Raises:
        InputError: the file named does not exist.
    """
    path = given or os.environ.get("SCHEDKIT_UPSTREAM_BACKFILL")
    if path and not os.path.isfile(path):
        raise InputError(f"{path}: no such file")
    return path


def summary(times: list[float]) -> str:
    """``mean / p95 / max`` in milliseconds."""
    if not times:
        return "-"
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return f"{statistics.fmean(times) * 1e3:.1f} / {p95 * 1e3:.1f} / {ordered[-1] * 1e3:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", default="curie", help="curie, kth or an SWF path")
    parser.add_argument("--whole-nodes", action="store_true")
    parser.add_argument(
        "--pending", type=positive, nargs="+", default=[1000, 10000, 100000]
    )
    parser.add_argument(
        "--schedulers",
        nargs="+",
        default=["fifo", "easy", "conservative:64", "conservative"],
    )
    parser.add_argument("--passes", type=positive, default=40)
    parser.add_argument("--upstream", help="path of flux-core's sched-backfill.py")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    for name in args.schedulers:
        if name != "sched-backfill":
            try:
                reference_spec(name)
            except ValueError as exc:
                parser.error(f"--schedulers: {exc}")
    raise SystemExit(guarded("", lambda: report(args), prog="sched_pass"))


def report(args) -> int:
    """Time every scheduler at every queue length and print the tables;
    the exit status."""
    try:
        upstream = upstream_path(args.upstream)
        names = list(args.schedulers)
        if upstream and "sched-backfill" not in names:
            names.append("sched-backfill")
        # Every name resolved (and sched-backfill.py imported) before the
        # first run, so that a wrong one fails at once.
        targets = {name: scheduler_target(name, upstream) for name in names}
        jobs = trace_jobs(Path(TRACES.get(args.trace, args.trace)))
    except InputError as exc:
        say("", str(exc), prog="sched_pass")
        return EXIT_USAGE
    print(
        f"{args.trace}: {len(jobs)} usable jobs; {NODES} x {CORES} cores; "
        f"{'whole nodes' if args.whole_nodes else '1-core slots'}"
    )
    rows = []
    for pending in args.pending:
        for name in names:
            try:
                m, setup = _time_one(targets[name], jobs, pending, args)
            except (ModuleLoadError, BrokerStalled, RefereeError) as exc:
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
                say("", f"{name}: {type(exc).__name__}: {first}", prog="sched_pass")
                return EXIT_FAILED
            rows.append((name, pending, m, setup))
            print(
                f"  {name:<16} {pending:>7} pending: first {m.first * 1e3:9.1f} ms | "
                f"idle {len(m.idle):>3} passes {summary(m.idle):>24} | "
                f"starting {len(m.busy):>3} passes ({m.started} jobs) "
                f"{summary(m.busy):>24} | setup {setup:.1f} s",
                flush=True,
            )
    print("\nall timed passes, mean / p95 / max ms [mean ratio to easy]")
    for pending in args.pending:
        means = {
            n: statistics.fmean(m.idle + m.busy)
            for n, p, m, _ in rows
            if p == pending and m.idle + m.busy
        }
        for name, p, m, _ in rows:
            if p != pending:
                continue
            ratio = (
                f" [{means[name] / means['easy']:.2f}x]"
                if "easy" in means and name in means
                else ""
            )
            print(f"{name:<16} {pending:>7} {summary(m.idle + m.busy):>26}{ratio}")
    return EXIT_OK


def _time_one(loadable, jobs, pending, args) -> tuple[Measured, float]:
    """Build the queue, load *loadable* (``(load spec, module args)``, as
    :func:`scheduler_target` gives it) and time its passes: ``(measured,
    setup seconds)``; raises what loading or a broken run raises."""
    target, module_args = loadable
    # Without the brokers of the runs before (cycles of objects, a
    # transcript each), which this run's full collections would traverse.
    gc.collect()
    wall = time.perf_counter()
    broker = build(target, module_args, jobs, pending, args.whole_nodes, args.seed)
    setup = time.perf_counter() - wall
    m = measure(broker, args.passes)
    broker.observer.assert_clean()
    broker.close()
    return m, setup


if __name__ == "__main__":
    main()
