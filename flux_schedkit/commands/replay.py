"""Replay a workload trace (SWF) through a scheduler on the mock broker.

--scheduler takes fifo, easy or conservative (a reference scheduler), a
PATH.py or a pkg.module, either with :Class.  Every trace job is submitted
at its submit time and runs for its run time through the real scheduler
module; the figures are printed at the end: jobs, simulated span, mean /
median / p95 wait, mean bounded slowdown (10 s threshold), utilization,
makespan and jobs per wall-clock second.  --json writes every job's record
with the figures, --csv the per-job table, --gantt and --plot pictures.
A progress bar is shown on a terminal only.  `flux-schedkit compare` runs
several schedulers side by side.

The machine defaults to the trace header's MaxNodes nodes of
MaxProcs/MaxNodes cores.  Traces come from the Parallel Workloads Archive
(cite it, and the log's source, with any figure you publish).

Exit status: 0 if every job ended and the referee saw no violation; 1 if
jobs were left unfinished (the reason is printed), the referee saw a
violation, an output could not be written, or the output was closed early
(a broken pipe); 2 for a usage or input error (unreadable, truncated,
empty or malformed trace, nothing selected, a module that does not load);
130 if interrupted (Ctrl-C).
"""

from __future__ import annotations

import argparse
import sys

from flux_schedkit import trace_options
from flux_schedkit.console import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    ProgressBars,
    guarded,
    say,
)

COMMAND = "replay"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``flux-schedkit replay``."""
    trace_options.add_arguments(parser, "the scheduler to replay the trace with")
    out = parser.add_argument_group("outputs")
    out.add_argument(
        "--json", metavar="OUT.json", help="write every job's record and the figures"
    )
    out.add_argument("--csv", metavar="OUT.csv", help="write the per-job table")
    out.add_argument(
        "--gantt", metavar="OUT.png", help="draw a Gantt chart (one row per node)"
    )
    out.add_argument(
        "--gantt-window",
        type=trace_options.window,
        metavar="START:END",
        help="the Gantt chart's stretch of time in the trace's time "
        "(default: the whole replay)",
    )
    out.add_argument(
        "--plot", metavar="OUT.png", help="draw utilization and queue length over time"
    )


def run(args: argparse.Namespace) -> int:
    """Replay the trace; return the exit status."""
    return guarded(COMMAND, lambda: _replay(args))


def _replay(args: argparse.Namespace) -> int:
    from flux_schedkit.trace_options import InputError

    if len(args.scheduler) > 1:
        say(
            COMMAND,
            "one --scheduler at a time; `flux-schedkit compare` replays "
            "a trace with several",
        )
        return EXIT_USAGE
    try:
        trace_options.check_writable(
            args.json, args.csv, args.gantt, args.plot, inputs=(args.trace,)
        )
        module_args = trace_options.module_args(args)
        module = trace_options.resolve_scheduler(args.scheduler[0])
        source = trace_options.prepare(args)
    except InputError as exc:
        say(COMMAND, str(exc))
        return EXIT_USAGE
    for line in trace_options.describe(source):
        print(line)
    print(f"scheduler: {args.scheduler[0]}, args: {args.args or 'none'}", flush=True)
    outcome = run_replay(args.scheduler[0], module, module_args, source, args)
    if isinstance(outcome, int):
        return outcome
    result, doc = outcome
    from replay.results import summary

    print()
    for line in summary(doc):
        print(line)
    sys.stdout.flush()
    status = EXIT_FAILED if trace_options.report(COMMAND, doc) else EXIT_OK
    try:
        _write_outputs(args, result, doc, source)
    except OSError as exc:
        say(COMMAND, f"cannot write {exc.filename or 'an output'}: {exc.strerror}")
        return EXIT_FAILED
    return status


def run_replay(label: str, module: str, module_args, source, args):
    """Replay *source* through *module* with a progress bar; return
    ``(result, document)``, or an exit status if the module did not load."""
    from conformance.referee import Referee
    from mock_broker.runtime.module_host import ModuleLoadError
    from replay.results import document
    from replay.runner import replay

    total = len(source.workload.jobs)
    with ProgressBars(enabled=not args.no_progress) as bars:
        update = bars.add(f"{label}", total)
        try:
            result, broker = replay(
                module,
                source.workload,
                source.machine,
                module_args,
                label=label,
                seed=args.seed,
                watch=Referee.attach,
                unix_start_time=source.trace.unix_start_time,
                progress=update,
            )
        except ModuleLoadError as exc:
            say(COMMAND, f"the scheduler did not load: {exc}")
            return EXIT_USAGE
    broker.close()
    return result, document(result, source)


def _write_outputs(args, result, doc, source) -> None:
    from replay import pictures, results

    if args.json:
        results.write_json(args.json, doc)
        print(f"wrote {args.json}")
    if args.csv:
        results.write_csv(args.csv, result.records)
        print(f"wrote {args.csv}")
    group = source.machine.groups[0]
    name = doc["trace"]["name"]
    if args.gantt:
        pictures.draw_gantt(
            result.records,
            source.machine.size,
            group.cores,
            args.gantt,
            window=args.gantt_window,
            title=f"{name}: {result.scheduler}",
        )
        print(f"wrote {args.gantt}")
    if args.plot:
        series = pictures.usage_series(result.records, result.total_cores)
        pictures.draw_usage(
            {result.scheduler: series}, args.plot, title=f"{name}: {result.scheduler}"
        )
        print(f"wrote {args.plot}")
