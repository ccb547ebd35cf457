"""How many jobs per second of wall time the mock broker carries end to end.

Each job is submitted, allocated by a scheduler, runs for a scripted
virtual runtime (10-69 s, limit 600 s) and is freed.  Jobs arrive at a
steady rate set by ``--load``, the cores they ask for over the machine's
cores: at the default 0.9 a few hundred run at once and the queue stays
short, as on a busy machine that keeps up; above 1 the queue grows for as
long as jobs arrive (``--load 1.93`` is the fixed 20 jobs a second of
earlier versions of this script: 2,000 jobs leave ~800 queued).  The
table reports the longest queue seen (sampled every 50 arrivals) and, for
the reference schedulers, ``reservation_moves`` of their statistics: jobs
started or placed earlier than the reservation they held, the work
compression does (it grows with the queue: see docs/performance.rst).
``null`` (``benchmarks/null_scheduler.py``, raw RFC 27 messages and a list
of free cores per rank) costs a few microseconds a job: its rate is the
mock broker's own.  ``minimal`` is the smallest scheduler the upstream
framework allows (``tests/mock_broker/schedulers/seed_minimal.py``, on
flux-python's ``Rv1Pool``), the base of the ratios; the reference
schedulers are named
``fifo``, ``easy``, ``conservative`` or ``conservative:N`` (reservation
depth N); any name ending in ``.py`` is the path of a scheduler module
file on flux-python's framework, loaded with ``queue-depth=unlimited``
and shown by its file name (flux-core's own ``sched-fifo.py`` or
``sched-backfill.py``, or yours).  Jobs are ``--shape slots`` (one slot of 1-4 cores: the
reservation schedulers plan with the allocator) or ``--shape tasks``
(1-4 one-core slots: they plan with core counts).  Prints the mean, best
and worst rate over ``--repeat`` runs, each scheduler's ratio to the
minimal one, and the mean process CPU seconds of a run (``cpu s``: load
from other processes stretches the wall time the rates come from, not
this); the machine is noisy, so compare within one run.  Runs take
turns, and each starts from a collected heap: the runs before it leave
nothing for its garbage collections to read.

    python benchmarks/mock_throughput.py [--jobs 2000 20000] [--repeat 3]
        [--schedulers null minimal fifo easy conservative PATH.py]
        [--shape slots|tasks] [--nodes 64] [--cores 16] [--load 0.9]

Exit status: 0 done, 1 a scheduler failed to load or did not finish the
jobs (or the output was closed early), 2 a bad argument, 130 interrupted.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import time
from dataclasses import dataclass

from conformance.referee import Referee
from flux_schedkit.console import EXIT_FAILED, EXIT_OK, guarded, say
from flux_schedkit.reference import reference_spec
from flux_schedkit.trace_options import above_zero, positive
from mock_broker.jobspec import make_jobspec
from mock_broker.machine import Machine
from mock_broker.runtime.broker import BrokerStalled, MockBroker
from mock_broker.runtime.module_host import ModuleLoadError

#: Referee findings that cannot change this benchmark's run.
TIMES_ONLY = frozenset({"R-times-wrong"})

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
    if name.endswith(".py"):
        return name, ["queue-depth=unlimited"]
    try:
        policy, depth = reference_spec(name)
    except ValueError:
        raise ValueError(
            f"unknown scheduler {name!r}: choose null, minimal, fifo, easy, "
            "conservative, conservative:N (N >= 1) or the path of a module "
            "file ending in .py"
        ) from None
    args = ["queue-depth=unlimited"]
    if depth is not None:
        args.append(f"reservation-depth={depth}")
    return os.path.join(SCHEDULERS, policy, f"schedkit-{policy}.py"), args


class BenchmarkFailed(Exception):
    """A scheduler did not load, or did not carry every job to the end."""


def label(name: str) -> str:
    """How the table names a scheduler: a module path by its file name."""
    return os.path.basename(name) if name.endswith(".py") else name


def runtime(i: int) -> int:
    """Virtual runtime of job *i* (10-69 s)."""
    return 10 + (i * 7) % 60


def arrival_interval(load: float, nodes: int, cores: int) -> float:
    """Virtual seconds between arrivals so the jobs ask for *load* times
    the machine's cores (each job 1-4 cores, runtimes as :func:`runtime`)."""
    mean_cores = sum(1 + i % 4 for i in range(8)) / 8
    mean_runtime = sum(runtime(i) for i in range(60)) / 60
    return mean_cores * mean_runtime / (load * nodes * cores)


@dataclass
class Run:
    """What one run measured."""

    wall: float  #: seconds of wall time from the first arrival to the last free
    messages: int  #: RFC 27 and other messages the broker carried
    longest: int  #: the longest queue seen (sampled every 50 arrivals)
    #: the scheduler's ``reservation_moves`` (None: it reports none)
    moves: int | None


def run_once(
    njobs: int,
    name: str = "minimal",
    shape: str = "slots",
    nodes: int = 64,
    cores: int = 16,
    load: float = 0.9,
) -> Run:
    """One run: its wall time and counts."""
    broker = MockBroker(Machine.uniform(nodes, cores), seed=1)
    Referee.attach(broker)
    try:
        broker.load(*target(name))
    except ModuleLoadError as exc:
        raise BenchmarkFailed(f"{name}: cannot load: {exc}") from None
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

    start = broker.now

    def submit(i: int) -> None:
        nonlocal longest
        broker.jobs.submit(jobspecs[i % 8], runtime=runtime(i))
        if i % 50 == 0:
            longest = max(longest, broker.jobs.sched_count)
        # Each arrival schedules the next, as jobs reach a real instance:
        # thousands scheduled at once would make the broker's event heap,
        # not the jobs, the cost that grows with the run.
        if i + 1 < njobs:
            broker.at(start + (i + 1) * interval, lambda: submit(i + 1))

    t0 = time.perf_counter()
    broker.at(start, lambda: submit(0))
    try:
        broker.run()
    except BrokerStalled as exc:
        raise BenchmarkFailed(f"{name}: {exc}") from None
    wall = time.perf_counter() - t0
    done = sum(1 for j in broker.jobs.jobs.values() if j.result == "completed")
    if done != njobs:
        raise BenchmarkFailed(f"{name}: only {done} of {njobs} jobs completed")
    # Every job ends long before its limit here, so an R without its times
    # (the guide's minimal scheduler leaves them 0) changes nothing in the
    # run; the conformance kit judges it (alloc.R-times).
    violations = [v for v in broker.observer.violations if v.kind not in TIMES_ONLY]
    if violations:
        first = str(violations[0]).splitlines()[0]
        raise BenchmarkFailed(
            f"{name}: {len(violations)} RFC 27 violation(s), the first: {first}"
        )
    messages = len(broker.transcript)
    # Only the reference schedulers report reservation_moves (a module of
    # the user's may answer no stats-get at all).
    reference = name not in ("null", "minimal") and not name.endswith(".py")
    stats = broker.stats() if reference else {}
    broker.close()
    return Run(wall, messages, longest, stats.get("reservation_moves"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=positive, nargs="+", default=[2000, 20000])
    parser.add_argument("--repeat", type=positive, default=3)
    parser.add_argument(
        "--schedulers",
        nargs="+",
        default=["null", "minimal", "fifo", "easy", "conservative"],
    )
    parser.add_argument("--shape", choices=["slots", "tasks"], default="slots")
    parser.add_argument("--nodes", type=positive, default=64)
    parser.add_argument("--cores", type=positive, default=16)
    parser.add_argument(
        "--load",
        type=above_zero,
        default=0.9,
        help="cores the jobs ask for over the machine's cores (default 0.9)",
    )
    args = parser.parse_args()
    check_schedulers(parser, args.schedulers)
    raise SystemExit(guarded("", lambda: report(args), prog="mock_throughput"))


def check_schedulers(parser: argparse.ArgumentParser, names: list[str]) -> None:
    """Fail through *parser* (status 2, the name in one line) unless every
    one of *names* is a scheduler :func:`target` knows and its file exists."""
    for name in names:
        try:
            path, _ = target(name)
        except ValueError as exc:
            parser.error(str(exc))
        if not os.path.isfile(path):
            parser.error(f"{name}: no such file")


def report(args) -> int:
    """Run the rounds and print the table; the exit status."""
    try:
        _rounds(args)
    except BenchmarkFailed as exc:
        say("", str(exc), prog="mock_throughput")
        return EXIT_FAILED
    return EXIT_OK


def _rounds(args) -> None:
    print(f"offered load {args.load:g}, {args.nodes} x {args.cores} cores")
    print(
        f"{'scheduler':<20} {'jobs':>7} {'mean jobs/s':>12} {'best':>8} "
        f"{'worst':>8} {'vs minimal':>10} {'messages':>9} {'max queue':>9} "
        f"{'moves':>8} {'cpu s':>8}"
    )
    for njobs in args.jobs:
        # Rounds alternate the schedulers, so drift in machine load hits all.
        walls: dict[str, list[float]] = {name: [] for name in args.schedulers}
        cpus: dict[str, list[float]] = {name: [] for name in args.schedulers}
        messages = {}
        queues = {}
        moves = {}
        for _ in range(args.repeat):
            for name in args.schedulers:
                # Every run starts from a heap without the runs before it:
                # their brokers (cycles of objects, a transcript each) would
                # otherwise be traversed by this run's full collections.
                gc.collect()
                # Process CPU time (the module runs in a thread of this
                # process): other load on the machine stretches wall time,
                # not this.
                cpu = time.process_time()
                run = run_once(
                    njobs, name, args.shape, args.nodes, args.cores, args.load
                )
                cpus[name].append(time.process_time() - cpu)
                walls[name].append(run.wall)
                messages[name] = run.messages
                queues[name] = run.longest
                moves[name] = "-" if run.moves is None else run.moves
        base = (
            njobs / statistics.fmean(walls["minimal"]) if "minimal" in walls else None
        )
        for name in args.schedulers:
            rates = [njobs / w for w in walls[name]]
            mean = njobs / statistics.fmean(walls[name])
            ratio = f"{base / mean:.2f}x" if base else "-"
            print(
                f"{label(name):<20} {njobs:>7} {mean:>12.0f} {max(rates):>8.0f} "
                f"{min(rates):>8.0f} {ratio:>10} {messages[name]:>9} "
                f"{queues[name]:>9} {moves[name]:>8} "
                f"{statistics.fmean(cpus[name]):>8.2f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
