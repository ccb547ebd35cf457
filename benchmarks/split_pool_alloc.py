"""Allocation cost of the SplitPool and of the reference schedulers' pool
against flux-python's Rv1Pool, on a fragmented 1,024-node GPU machine,
with request sizes from a real trace.

The pools: ``Rv1Pool`` (flux-python's, the base of the ratios), ``Pool``
(:mod:`flux_sched_base.pool`, the reference schedulers' default: the same
choices as Rv1Pool, found from free counts), ``SplitPool`` and
``SplitPoolAnySlots`` (docs/split-pool.rst).

The machine: 1,024 nodes of 32 cores and 4 GPUs.  A trace job of *p*
processors becomes a slot-only request of ``N = ceil(p / procs-per-task)``
tasks: three jobs in four a GPU job of 8 cores and 1 GPU a task (``flux
run -n N -c 8 -g 1``), every fourth (by trace job id) a CPU-only job of 4
cores a task (``-c 4``).  With the default of 1 processor a task, a job
of the KTH SP2 (the default trace, single-processor nodes) asks for as
many tasks as it had nodes, 1 to 100; 61% of its jobs fit on one node
here.  (For CEA Curie, ``--procs-per-task 4`` makes one 16-core node one
4-GPU node; give its size with ``--trace-procs 93312``, as that part of
the log has no header.)  Jobs larger than the machine are left out.

The fragmented state: the trace's jobs arrive at their submit times,
scaled so that the arrival rate per node is ``--load`` times the trace's
(default 3: about three quarters of the GPUs busy, few nodes idle), each is allocated if it fits
then (otherwise dropped) and freed at the end of its run time, for
``--warmup`` jobs; the jobs still running then are the state.  The state
is made once by Rv1Pool and once by the SplitPool (a site sees the
fragmentation of its own allocator), and each state is loaded into every
pool, so all pools answer the same requests on the same state.  The next
``--requests`` trace jobs are then timed one at a time on each pool:
``pool.alloc()`` (successful or not), measured with
``time.perf_counter``; a successful allocation is freed again, untimed.

For each state and pool it prints how many requests were placed, the
mean, 95th percentile and maximum time per request in milliseconds, and
the ratios of mean and p95 to Rv1Pool's on the same state.

    python benchmarks/split_pool_alloc.py [--trace PATH] [--requests 500]
        [--warmup 3000] [--load 3] [--procs-per-task 1] [--trace-procs N]
        [--skip 0]

Exit status: 0 done, 2 unreadable trace or bad arguments, 130 interrupted.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from pathlib import Path

from mock_broker import flux_substitute

flux_substitute.install()

from flux.resource import (  # noqa: E402
    InfeasibleRequest,
    InsufficientResources,
    ResourcePool,
)

from flux_sched_base.pool import Pool  # noqa: E402
from flux_sched_base.split_pool import SplitPool, SplitPoolAnySlots  # noqa: E402
from flux_schedkit.trace_options import above_zero, not_negative, positive  # noqa: E402
from mock_broker.jobspec import make_jobspec  # noqa: E402
from mock_broker.machine import Machine  # noqa: E402
from mock_broker.runtime.clock import VirtualClock  # noqa: E402
from replay.swf import SWFError, read_swf  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_TRACE = ROOT.parent / "shared" / "traces" / "KTH-SP2-1996-2.1-cln.swf.gz"
NODES, CORES, GPUS = 1024, 32, 4
GPU_TASK_CORES, CPU_TASK_CORES = 8, 4
POOLS = {
    "Rv1Pool": ResourcePool,
    "Pool": Pool,
    "SplitPool": SplitPool,
    "SplitPoolAnySlots": SplitPoolAnySlots,
}


def requests_of(trace, args) -> list[tuple[dict, float, float]]:
    """``(jobspec, submit, run time)`` of each trace job that fits the
    machine, submit times scaled for the load wanted."""
    procs = args.trace_procs or trace.max_procs or max(j.procs for j in trace.jobs)
    scale = procs / args.procs_per_task / (NODES * GPUS) / args.load
    out = []
    for job in trace.jobs:
        tasks = max(1, math.ceil(job.procs / args.procs_per_task))
        if job.job_id % 4 == 0:
            spec = make_jobspec(slots=tasks, cores=CPU_TASK_CORES)
            fits = tasks * CPU_TASK_CORES <= NODES * CORES
        else:
            spec = make_jobspec(slots=tasks, cores=GPU_TASK_CORES, gpus=1)
            fits = tasks <= NODES * GPUS
        if fits:
            out.append((spec, job.submit * scale, job.run))
    return out


def fragment(make_pool, jobs) -> tuple[dict[int, dict], int]:
    """Replay *jobs* on a pool from *make_pool*: allocate at submit if it
    fits, free at the end of the run.  Returns the R of each job still
    running at the end, and how many were dropped."""
    pool = make_pool()
    running: dict[int, tuple[float, dict]] = {}
    dropped = 0
    clock = VirtualClock(0.0)
    with clock.active():
        for jobid, (spec, submit, run) in enumerate(jobs, 1):
            for other in [j for j, (end, _) in running.items() if end <= submit]:
                pool.free(other)
                del running[other]
            request = pool.parse_resource_request(spec)
            try:
                R = pool.alloc(jobid, request)
            except (InsufficientResources, InfeasibleRequest):
                dropped += 1
                continue
            running[jobid] = (submit + run, R.to_dict())
    return {jobid: R for jobid, (_, R) in running.items()}, dropped


def loaded(make_pool, state: dict[int, dict]):
    """A pool from *make_pool* holding the allocations of *state*."""
    pool = make_pool()
    for jobid, R in state.items():
        pool.register_alloc(jobid, ResourcePool(R))
    return pool


def describe(pool) -> str:
    impl = pool.impl
    busy = sum(len(info["allocated_gpus"]) for info in impl._ranks.values())
    patterns = {
        (
            frozenset(info["cores"] - info["allocated_cores"]),
            frozenset(info["gpus"] - info["allocated_gpus"]),
        )
        for info in impl._ranks.values()
    }
    idle = sum(1 for info in impl._ranks.values() if not info["allocated_cores"])
    return (
        f"{busy / (NODES * GPUS):.0%} of GPUs busy, {idle} idle nodes, "
        f"{len(patterns)} distinct free-id patterns"
    )


def time_requests(pools: dict, specs: list[dict]) -> dict[str, tuple[list, int]]:
    """Seconds per ``alloc`` of each request on each pool, and how many
    each placed.  The pools take turns request by request, so that
    whatever else the machine does weighs on all of them alike."""
    out: dict[str, tuple[list, int]] = {name: ([], 0) for name in pools}
    clock = VirtualClock(0.0)
    with clock.active():
        for n, spec in enumerate(specs):
            jobid = 10_000_000 + n
            for name, pool in pools.items():
                request = pool.parse_resource_request(spec)
                t0 = time.perf_counter()
                try:
                    pool.alloc(jobid, request)
                    ok = True
                except (InsufficientResources, InfeasibleRequest):
                    ok = False
                elapsed = time.perf_counter() - t0
                times, placed = out[name]
                times.append(elapsed)
                if ok:
                    out[name] = (times, placed + 1)
                    pool.free(jobid)
    return out


def summary(times: list[float]) -> tuple[float, float, float]:
    """Mean, 95th percentile and maximum, in milliseconds."""
    ms = [t * 1000.0 for t in times]
    p95 = statistics.quantiles(ms, n=20)[-1] if len(ms) > 1 else ms[0]
    return statistics.fmean(ms), p95, max(ms)


def run(args) -> None:
    trace = read_swf(args.trace, limit=args.warmup + args.requests, skip=args.skip)
    jobs = requests_of(trace, args)
    if len(jobs) <= args.warmup:
        raise SWFError(
            f"{args.trace}: {len(jobs)} usable jobs, need more than "
            f"--warmup {args.warmup}"
        )
    warmup, measured = jobs[: args.warmup], jobs[args.warmup :]
    specs = [spec for spec, _, _ in measured]
    R = Machine.uniform(NODES, CORES, GPUS).to_R()
    print(
        f"{Path(args.trace).name}: {NODES} nodes x {CORES} cores, {GPUS} GPUs; "
        f"{args.procs_per_task} trace processor(s) a task; GPU tasks of "
        f"{GPU_TASK_CORES} cores and 1 GPU, CPU-only tasks of {CPU_TASK_CORES} cores"
    )
    sizes = sorted(spec["resources"][0]["count"] for spec in specs)
    gpu_jobs = sum(1 for spec in specs if len(spec["resources"][0]["with"]) > 1)
    print(
        f"{len(specs)} requests ({gpu_jobs} GPU, {len(specs) - gpu_jobs} CPU-only): "
        f"tasks median {statistics.median(sizes):g}, "
        f"p95 {statistics.quantiles(sizes, n=20)[-1]:g}, max {sizes[-1]}"
    )
    for maker in ("Rv1Pool", "SplitPool"):
        state, dropped = fragment(lambda m=maker: POOLS[m](R), warmup)
        print(
            f"\nstate made by {maker}: {len(warmup)} jobs replayed "
            f"({dropped} dropped), {len(state)} running, "
            + describe(loaded(lambda: ResourcePool(R), state))
        )
        print(
            f"{'pool':<20} {'placed':>9} {'mean ms':>9} {'p95 ms':>9} "
            f"{'max ms':>9} {'mean ratio':>11} {'p95 ratio':>10}"
        )
        pools = {name: loaded(lambda c=cls: c(R), state) for name, cls in POOLS.items()}
        base = None
        for name, (times, placed) in time_requests(pools, specs).items():
            mean, p95, most = summary(times)
            if base is None:
                base = (mean, p95)
            print(
                f"{name:<20} {placed:>4}/{len(specs):<4} {mean:>9.3f} "
                f"{p95:>9.3f} {most:>9.3f} {mean / base[0]:>10.2f}x "
                f"{p95 / base[1]:>9.2f}x",
                flush=True,
            )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", default=str(DEFAULT_TRACE))
    parser.add_argument("--requests", type=positive, default=500)
    parser.add_argument("--warmup", type=positive, default=3000)
    parser.add_argument("--load", type=above_zero, default=3.0)
    parser.add_argument("--procs-per-task", type=positive, default=1)
    parser.add_argument(
        "--trace-procs",
        type=positive,
        default=None,
        help="default: the MaxProcs header",
    )
    parser.add_argument("--skip", type=not_negative, default=0)
    args = parser.parse_args(argv)
    try:
        run(args)
    except (OSError, SWFError) as exc:
        if isinstance(exc, BrokenPipeError):
            # Output cut short (| head): nothing more to say, and nothing
            # for the interpreter to flush at exit.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 0
        print(f"split_pool_alloc: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("split_pool_alloc: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
