"""How many jobs per second of wall time the mock broker carries end to end.

Each job is submitted, allocated by a scheduler, runs for a scripted
virtual runtime (10-69 s, limit 600 s) and is freed.  Jobs arrive at a
steady rate set by ``--load``, the cores they ask for over the machine's
cores: at the default 0.9 a few hundred run at once and the queue stays
short, as on a busy machine that keeps up; above 1 the queue grows for as
long as jobs arrive (``--load 1.93`` is the fixed 20 jobs a second of
earlier versions of this script: 2,000 jobs leave ~800 queued).  The
table reports the longest queue seen (sampled every 50 arrivals).
``null`` (``benchmarks/null_scheduler.py``, raw RFC 27 messages and a list
of free cores per rank) costs a few microseconds a job: its rate is the
mock broker's own.  ``minimal`` is the smallest scheduler the upstream
framework allows (``tests/mock_broker/schedulers/seed_minimal.py``, on
flux-python's ``Rv1Pool``), the base of the ratios; the reference
schedulers are named
``fifo``, ``easy``, ``conservative`` or ``conservative:N`` (reservation
depth N).  Jobs are ``--shape slots`` (one slot of 1-4 cores: the
reservation schedulers plan with the allocator) or ``--shape tasks``
(1-4 one-core slots: they plan with core counts).  Prints the mean, best
and worst rate over ``--repeat`` runs and each scheduler's ratio to the
minimal one; the machine is noisy, so compare within one run.

    python benchmarks/mock_throughput.py [--jobs 2000 20000] [--repeat 3]
        [--schedulers null minimal fifo easy conservative] [--shape slots|tasks]
        [--nodes 64] [--cores 16] [--load 0.9]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from conformance.referee import Referee
from mock_broker.jobspec import make_jobspec
from mock_broker.machine import Machine
from mock_broker.runtime.broker import MockBroker

SEED_SCHEDULER = os.path.join(
    os.path.dirname(__file__),
    "..",
    "tests",
    "mock_broker",
    "schedulers",
    "seed_minimal.py",
)

NULL_SCHEDULER = os.path.join(os.path.dirname(__file__), "null_scheduler.py")

SCHEDULERS = os.path.join(os.path.dirname(__file__), "..", "schedulers")


def target(name: str) -> tuple[str, list[str]]:
    """Load spec and module arguments for a scheduler name."""
    if name == "minimal":
        return SEED_SCHEDULER, []
    if name == "null":
        return NULL_SCHEDULER, []
    policy, _, depth = name.partition(":")
    if policy not in ("fifo", "easy", "conservative"):
        raise SystemExit(f"unknown scheduler {name!r}")
    args = ["queue-depth=unlimited"]
    if depth:
        args.append(f"reservation-depth={depth}")
    return os.path.join(SCHEDULERS, policy, f"schedkit-{policy}.py"), args


def runtime(i: int) -> int:
    """Virtual runtime of job *i* (10-69 s)."""
    return 10 + (i * 7) % 60


def arrival_interval(load: float, nodes: int, cores: int) -> float:
    """Virtual seconds between arrivals so the jobs ask for *load* times
    the machine's cores (each job 1-4 cores, runtimes as :func:`runtime`)."""
    mean_cores = sum(1 + i % 4 for i in range(8)) / 8
    mean_runtime = sum(runtime(i) for i in range(60)) / 60
    return mean_cores * mean_runtime / (load * nodes * cores)


def run_once(
    njobs: int,
    name: str = "minimal",
    shape: str = "slots",
    nodes: int = 64,
    cores: int = 16,
    load: float = 0.9,
) -> tuple[float, MockBroker, int]:
    """One run; returns its wall time, the broker, and the longest queue."""
    broker = MockBroker(Machine.uniform(nodes, cores), seed=1)
    Referee.attach(broker)
    broker.load(*target(name))
    if shape == "tasks":
        jobspecs = [
            make_jobspec(slots=1 + i % 4, cores=1, duration=600) for i in range(8)
        ]
    else:
        jobspecs = [
            make_jobspec(slots=1, cores=1 + i % 4, duration=600) for i in range(8)
        ]
    interval = arrival_interval(load, nodes, cores)
    longest = 0
    sampling = 0.0  # wall time spent counting the queue, not the broker's

    def submit(i: int) -> None:
        nonlocal longest, sampling
        broker.jobs.submit(jobspecs[i % 8], runtime=runtime(i))
        if i % 50 == 0:
            t = time.perf_counter()
            longest = max(longest, len(broker.jobs.jobs_in("SCHED")))
            sampling += time.perf_counter() - t

    t0 = time.perf_counter()
    for i in range(njobs):
        broker.at(broker.now + i * interval, lambda i=i: submit(i))
    broker.run()
    wall = time.perf_counter() - t0 - sampling
    done = sum(1 for j in broker.jobs.jobs.values() if j.result == "completed")
    if done != njobs:
        raise SystemExit(f"only {done} of {njobs} jobs completed")
    broker.observer.assert_clean()
    broker.close()
    return wall, broker, longest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, nargs="+", default=[2000, 20000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--schedulers",
        nargs="+",
        default=["null", "minimal", "fifo", "easy", "conservative"],
    )
    parser.add_argument("--shape", choices=["slots", "tasks"], default="slots")
    parser.add_argument("--nodes", type=int, default=64)
    parser.add_argument("--cores", type=int, default=16)
    parser.add_argument(
        "--load",
        type=float,
        default=0.9,
        help="cores the jobs ask for over the machine's cores (default 0.9)",
    )
    args = parser.parse_args()
    if args.load <= 0:
        parser.error("--load must be above 0")
    print(f"offered load {args.load:g}, {args.nodes} x {args.cores} cores")
    print(
        f"{'scheduler':<16} {'jobs':>7} {'mean jobs/s':>12} {'best':>8} "
        f"{'worst':>8} {'vs minimal':>10} {'messages':>9} {'max queue':>9}"
    )
    for njobs in args.jobs:
        # Rounds alternate the schedulers, so drift in machine load hits all.
        walls: dict[str, list[float]] = {name: [] for name in args.schedulers}
        messages = {}
        queues = {}
        for _ in range(args.repeat):
            for name in args.schedulers:
                wall, broker, longest = run_once(
                    njobs, name, args.shape, args.nodes, args.cores, args.load
                )
                walls[name].append(wall)
                messages[name] = len(broker.transcript)
                queues[name] = longest
        base = (
            njobs / statistics.fmean(walls["minimal"]) if "minimal" in walls else None
        )
        for name in args.schedulers:
            rates = [njobs / w for w in walls[name]]
            mean = njobs / statistics.fmean(walls[name])
            ratio = f"{base / mean:.2f}x" if base else "-"
            print(
                f"{name:<16} {njobs:>7} {mean:>12.0f} {max(rates):>8.0f} "
                f"{min(rates):>8.0f} {ratio:>10} {messages[name]:>9} "
                f"{queues[name]:>9}",
                flush=True,
            )


if __name__ == "__main__":
    main()
