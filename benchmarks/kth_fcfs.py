"""Replay the whole KTH-SP2 log through the fifo module and check the FCFS
figures any correct replay reproduces: mean wait 218,832 s and mean
bounded slowdown 4,294.5 on 100 one-core nodes, user estimates as limits.

The unit suite checks these figures with a count-based FCFS and the
replay tool on a prefix (``tests/replay/test_kth_fcfs.py``); this script
replays all 27,992 jobs through the real module on the mock broker,
with the referee watching, and prints the figures and the wall time.

    python benchmarks/kth_fcfs.py [--trace PATH] [--scheduler fifo]

Exit status 0 if both figures match, 1 if not (or the output closed
early), 2 for an unknown scheduler or a trace that cannot be read (one
line on stderr), 130 on Ctrl-C.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from conformance.referee import Referee
from flux_schedkit.console import EXIT_USAGE, guarded, say
from flux_schedkit.reference import REFERENCE_SCHEDULERS, reference_path
from flux_schedkit.trace_options import InputError, reading
from replay.runner import replay
from replay.workload import prepare

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_TRACE = ROOT.parent / "shared" / "traces" / "KTH-SP2-1996-2.1-cln.swf.gz"
#: The published FCFS figures of the whole log (see the module docstring).
MEAN_WAIT, MEAN_BSLD = 218_832, 4_294.5


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", default=str(DEFAULT_TRACE))
    parser.add_argument("--scheduler", default="fifo", choices=REFERENCE_SCHEDULERS)
    args = parser.parse_args()
    return guarded("", lambda: check(args), prog="kth_fcfs")


def check(args) -> int:
    """Replay the trace and print the figures; the exit status."""
    t0 = time.perf_counter()
    try:
        with reading(args.trace):
            source = prepare(args.trace)
    except InputError as exc:
        say("", str(exc), prog="kth_fcfs")
        return EXIT_USAGE
    read = time.perf_counter() - t0
    result, broker = replay(
        str(reference_path(args.scheduler)),
        source.workload,
        source.machine,
        label=args.scheduler,
        watch=Referee.attach,
        unix_start_time=source.trace.unix_start_time,
    )
    broker.close()
    m = result.metrics
    wait_ok = round(m.mean_wait) == MEAN_WAIT
    bsld_ok = round(m.mean_bsld, 1) == MEAN_BSLD
    print(f"{Path(args.trace).name}: {m.jobs:,} jobs, {args.scheduler}")
    print(
        f"mean wait  {m.mean_wait:12,.1f} s   expected {MEAN_WAIT:,}   {_ok(wait_ok)}"
    )
    print(
        f"mean BSLD  {m.mean_bsld:12,.2f}     expected {MEAN_BSLD:,}   {_ok(bsld_ok)}"
    )
    print(
        f"read and map {read:.1f} s, replay {result.wall_seconds:.1f} s "
        f"({m.jobs_per_second:,.0f} jobs/s), referee violations "
        f"{len(result.violations)}, unfinished {m.unfinished}"
    )
    return 0 if wait_ok and bsld_ok and not result.violations else 1


def _ok(flag: bool) -> str:
    return "ok" if flag else "MISMATCH"


if __name__ == "__main__":
    sys.exit(main())
