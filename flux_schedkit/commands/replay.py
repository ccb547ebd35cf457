"""Replay a workload trace (SWF) against schedulers on the mock broker.

Each --scheduler (a module path, PATH:Class, or a reference scheduler
name: fifo, easy, conservative) replays the same jobs in a fresh broker;
one row of figures is printed per scheduler, side by side: jobs started
and denied, mean and median wait, mean bounded slowdown, utilization,
makespan (virtual seconds), wall time, and referee violations.

The machine defaults to the trace's MaxProcs nodes of one core each;
--nodes and --cores override it.  Traces come from the Parallel Workloads
Archive (cite it, and the log's source, with any figure you publish).

Exit status: 0 if every replay finished with no referee violation, 1
otherwise, 2 for a usage error or an unreadable trace.
"""

from __future__ import annotations

import argparse
import shlex
import sys

EXIT_OK, EXIT_FAILED, EXIT_ERROR = 0, 1, 2


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} must be at least 1")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``flux-schedkit replay``."""
    parser.add_argument("trace", metavar="TRACE", help="an SWF file, plain or .gz")
    parser.add_argument(
        "--scheduler",
        action="append",
        required=True,
        metavar="NAME|PATH[:Class]",
        help="a scheduler to replay the trace with (repeat to compare)",
    )
    parser.add_argument("--args", default="", help="module arguments for each")
    parser.add_argument("--jobs", type=_positive, help="replay at most this many")
    parser.add_argument(
        "--skip", type=int, default=0, help="pass over this many jobs first"
    )
    parser.add_argument("--nodes", type=_positive, help="nodes in the machine")
    parser.add_argument(
        "--cores", type=_positive, default=1, help="cores per node (default 1)"
    )
    parser.add_argument("--seed", type=int, default=0, help="the broker's seed")


def _resolve(spec: str) -> str:
    from flux_schedkit.reference import REFERENCE_SCHEDULERS, reference_path

    if spec in REFERENCE_SCHEDULERS:
        return str(reference_path(spec))
    return spec


def run(args: argparse.Namespace) -> int:
    """Replay the trace with every scheduler; return the exit status."""
    from conformance.referee import Referee
    from mock_broker.machine import Machine
    from mock_broker.runtime.module_host import ModuleLoadError
    from replay.runner import ReplayResult, replay
    from replay.swf import SWFError, read_swf

    try:
        trace = read_swf(args.trace, limit=args.jobs, skip=args.skip)
    except (OSError, SWFError) as exc:
        print(f"flux-schedkit replay: {exc}", file=sys.stderr)
        return EXIT_ERROR
    nodes = args.nodes or trace.max_procs
    if nodes is None:
        print(
            "flux-schedkit replay: the trace has no MaxProcs header; give --nodes",
            file=sys.stderr,
        )
        return EXIT_ERROR
    machine = Machine.uniform(nodes, args.cores)
    print(
        f"{args.trace}: {len(trace.jobs)} jobs ({trace.skipped} unusable skipped) "
        f"on {nodes} nodes x {args.cores} cores"
    )
    print(ReplayResult.header())
    status = EXIT_OK
    for spec in args.scheduler:
        try:
            result, broker = replay(
                _resolve(spec),
                trace.jobs,
                machine,
                shlex.split(args.args),
                label=spec,
                seed=args.seed,
                watch=Referee.attach,
            )
        except (ModuleLoadError, KeyError, FileNotFoundError) as exc:
            print(f"flux-schedkit replay: {exc}", file=sys.stderr)
            return EXIT_ERROR
        print(result.row(), flush=True)
        if result.violations or result.unfinished:
            status = EXIT_FAILED
            for violation in broker.observer.violations[:3]:
                print(violation, file=sys.stderr)
        broker.close()
    return status
