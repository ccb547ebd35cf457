"""Time per scheduling pass of the reference schedulers, on the mock broker.

A machine of 1,024 nodes x 16 cores runs 1,000 one-node jobs (the
scheduler learns them in its hello, as after a restart); 1,000, 10,000 or
100,000 more are queued behind them.  The script then lets running jobs
end (most end before their time limit) and times the passes that follow:
the work done inside each pass, summed over its generator steps with
``time.perf_counter`` (the ``recent_pass_times`` of ``stats-get`` for the
reference schedulers, the same wrapper around ``schedule()`` for
flux-core's ``sched-backfill.py``).  It prints the median and the 90th
percentile per policy and queue length, and each median's ratio to
easy's at the same length.

flux-core's ``sched-backfill.py`` is not part of this repository.  To run
it side by side, give the path of a copy of flux-core's source file with
``--upstream PATH`` or in ``$SCHEDKIT_UPSTREAM_BACKFILL``; without one it
is skipped with a message.

    python benchmarks/sched_pass.py [--pending 1000 10000 100000]
        [--policies easy conservative fifo] [--passes 30]
        [--upstream PATH] [--upstream-max-pending 10000]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import random
import statistics
import sys
import time
from pathlib import Path

from conformance.referee import Referee
from mock_broker.jobspec import make_jobspec
from mock_broker.machine import Machine
from mock_broker.runtime.broker import MockBroker

ROOT = Path(__file__).resolve().parent.parent
NODES, CORES, RUNNING = 1024, 16, 1000
POLICY_ARGS = {
    "fifo": ["queue-depth=unlimited"],
    "easy": ["queue-depth=unlimited"],
    "conservative": ["queue-depth=unlimited", "reservation-depth=64"],
    "sched-backfill": ["queue-depth=unlimited"],
}


def _pending_jobspec(rng: random.Random) -> tuple[dict, float]:
    """A queued job: mostly whole nodes, some sub-node; 10 min to 8 h."""
    duration = float(rng.choice([600, 1800, 3600, 7200, 14400, 28800]))
    kind = rng.random()
    if kind < 0.5:
        spec = make_jobspec(nodes=1, slots=1, cores=CORES, duration=duration)
    elif kind < 0.7:
        n = rng.choice([2, 3, 4])
        spec = make_jobspec(nodes=n, slots=n, cores=CORES, duration=duration)
    elif kind < 0.85:
        n = rng.choice([8, 16, 32])
        spec = make_jobspec(nodes=n, slots=n, cores=CORES, duration=duration)
    else:
        spec = make_jobspec(slots=1, cores=4, duration=duration)
    return spec, duration * rng.uniform(0.3, 1.0)


def build(target: str, args: list[str], pending: int, seed: int = 1) -> MockBroker:
    """~1,000 jobs already running (the scheduler learns them in its hello),
    then load *target* and queue *pending* more."""
    rng = random.Random(seed)
    broker = MockBroker(Machine.uniform(NODES, CORES), seed=seed)
    Referee.attach(broker)
    t0 = broker.now
    for rank in range(RUNNING):
        duration = float(rng.choice([3600, 7200, 14400]))
        # Started up to an hour ago; most will end before their time limit.
        start = t0 - rng.uniform(0, 3600)
        end = start + duration
        spec = make_jobspec(nodes=1, slots=1, cores=CORES, duration=duration)
        R = {
            "version": 1,
            "execution": {
                "R_lite": [{"rank": str(rank), "children": {"core": f"0-{CORES - 1}"}}],
                "nodelist": [f"node{rank}"],
                "starttime": start,
                "expiration": end,
            },
        }
        runtime = max(1.0, (end - t0) * rng.uniform(0.3, 1.0))
        broker.jobs.add_running(R, spec, runtime=runtime)
    broker.load(target, args)
    for _ in range(pending):
        spec, runtime = _pending_jobspec(rng)
        broker.jobs.submit(spec, runtime=runtime)
    broker.run_until_quiet()
    return broker


def measure(broker: MockBroker, passes: int) -> list[float]:
    """Let jobs end, one end time at a time; return the pass times seen."""
    times: list[float] = []
    done = broker.stats()["passes_completed"]
    while len(times) < passes:
        running = broker.jobs.jobs_in("RUN")
        if not running:
            break
        ends = [min(j.t_run + j.runtime, j.expiration or float("inf")) for j in running]
        broker.run_until(max(min(ends), broker.now))
        stats = broker.stats()
        new = stats["passes_completed"] - done
        done = stats["passes_completed"]
        if new > 0:
            times.extend(stats["recent_pass_times"][-new:])
    return times[:passes]


# -- flux-core's sched-backfill.py, timed the same way --------------------------


def _timed_upstream(path: str) -> str:
    """Import flux-core's sched-backfill.py and return a load spec for a
    subclass whose passes are timed like the reference schedulers'."""
    spec = importlib.util.spec_from_file_location("_schedkit_bench_upstream", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    base = module.BackfillScheduler

    class TimedBackfill(base):
        def __init__(self, h, *args):
            super().__init__(h, *args)
            self._bench_times: list[float] = []
            self._bench_done = 0

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
            self._bench_times = (self._bench_times + [elapsed])[-32:]

        def stats_get(self):
            stats = super().stats_get()
            stats["passes_completed"] = self._bench_done
            stats["recent_pass_times"] = list(self._bench_times)
            return stats

    module.TimedBackfill = TimedBackfill
    sys.modules[module.__name__] = module
    return f"{module.__name__}:TimedBackfill"


def upstream_path(given: str | None) -> str | None:
    path = given or os.environ.get("SCHEDKIT_UPSTREAM_BACKFILL")
    if not path:
        print(
            "sched-backfill: skipped (give a copy of flux-core's "
            "src/modules/sched-backfill.py with --upstream PATH or "
            "$SCHEDKIT_UPSTREAM_BACKFILL)"
        )
        return None
    if not os.path.isfile(path):
        print(f"sched-backfill: skipped ({path}: no such file)")
        return None
    return path


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pending", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument(
        "--policies", nargs="+", default=["fifo", "easy", "conservative"]
    )
    parser.add_argument("--passes", type=int, default=30)
    parser.add_argument("--upstream", help="path of flux-core's sched-backfill.py")
    parser.add_argument(
        "--upstream-max-pending",
        type=int,
        default=10000,
        help="skip sched-backfill above this queue length (its passes are long)",
    )
    parser.add_argument("--upstream-passes", type=int, default=10)
    args = parser.parse_args()

    targets = [
        (p, str(ROOT / "schedulers" / p / f"schedkit-{p}.py")) for p in args.policies
    ]
    upstream = upstream_path(args.upstream)
    if upstream:
        targets.append(("sched-backfill", _timed_upstream(upstream)))

    results: dict[tuple[str, int], list[float]] = {}
    for pending in args.pending:
        for name, target in targets:
            passes = args.passes
            if name == "sched-backfill":
                if pending > args.upstream_max_pending:
                    print(f"sched-backfill at {pending} pending: skipped")
                    continue
                passes = args.upstream_passes
            wall = time.perf_counter()
            broker = build(target, POLICY_ARGS[name], pending)
            setup = time.perf_counter() - wall
            times = measure(broker, passes)
            broker.observer.assert_clean()
            broker.close()
            results[(name, pending)] = times
            print(
                f"  {name} {pending} pending: {len(times)} passes, "
                f"median {statistics.median(times) * 1e3:.2f} ms "
                f"(setup {setup:.1f} s, total {time.perf_counter() - wall:.1f} s)",
                flush=True,
            )

    print()
    names = [name for name, _ in targets]
    header = f"{'scheduler':<16}" + "".join(f"{p:>25}" for p in args.pending)
    print("median ms per pass (p90) [ratio to easy]")
    print(header)
    for name in names:
        row = f"{name:<16}"
        for pending in args.pending:
            times = results.get((name, pending))
            if not times:
                row += f"{'-':>25}"
                continue
            median = statistics.median(times)
            easy = results.get(("easy", pending))
            ratio = f" [{median / statistics.median(easy):.1f}x]" if easy else ""
            cell = f"{median * 1e3:.2f} ({percentile(times, 0.9) * 1e3:.1f}){ratio}"
            row += f"{cell:>25}"
        print(row)
    for name in names:
        small = results.get((name, args.pending[0]))
        if small and len(args.pending) > 1:
            growth = [
                f"{p}: {statistics.median(results[(name, p)]) / statistics.median(small):.2f}x"
                for p in args.pending[1:]
                if results.get((name, p))
            ]
            print(
                f"growth from {args.pending[0]} pending, {name}: " + ", ".join(growth)
            )


if __name__ == "__main__":
    main()
