"""How many jobs per second of wall time the mock broker carries end to end.

Each job is submitted, allocated by the seed guide's minimal scheduler,
runs for a scripted virtual runtime and is freed.  Jobs arrive in waves so
that the queue stays short, as in a steady workload.  Prints jobs per wall
second for each size; run it a few times, the machine is noisy.

    python benchmarks/mock_throughput.py [--jobs 2000 10000] [--repeat 3]
        [--nodes 64] [--cores 16]
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


def run_once(njobs: int, nodes: int = 64, cores: int = 16) -> tuple[float, MockBroker]:
    broker = MockBroker(Machine.uniform(nodes, cores), seed=1)
    Referee.attach(broker)
    broker.load(SEED_SCHEDULER)
    jobspecs = [make_jobspec(slots=1, cores=1 + i % 4, duration=600) for i in range(8)]
    t0 = time.perf_counter()
    for i in range(njobs):
        # 20 jobs a virtual second; runtimes 10-70 s keep a few hundred running.
        broker.at(
            broker.now + i * 0.05,
            lambda i=i: broker.jobs.submit(jobspecs[i % 8], runtime=10 + (i * 7) % 60),
        )
    broker.run()
    wall = time.perf_counter() - t0
    done = sum(1 for j in broker.jobs.jobs.values() if j.result == "completed")
    if done != njobs:
        raise SystemExit(f"only {done} of {njobs} jobs completed")
    broker.observer.assert_clean()
    broker.close()
    return wall, broker


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, nargs="+", default=[2000, 10000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--nodes", type=int, default=64)
    parser.add_argument("--cores", type=int, default=16)
    args = parser.parse_args()
    print(f"{'jobs':>8} {'median wall s':>14} {'jobs/s':>10} {'messages':>10}")
    for njobs in args.jobs:
        walls = []
        for _ in range(args.repeat):
            wall, broker = run_once(njobs, args.nodes, args.cores)
            walls.append(wall)
        median = statistics.median(walls)
        print(
            f"{njobs:>8} {median:>14.3f} {njobs / median:>10.0f} "
            f"{len(broker.transcript):>10}"
        )


if __name__ == "__main__":
    main()
