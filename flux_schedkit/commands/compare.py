"""Replay one trace through several schedulers side by side, in parallel.

Each --scheduler (fifo, easy, conservative, a PATH.py or a pkg.module,
either with :Class) replays the same jobs on the same machine in a
process of its own, at most -j at a time; one table of figures follows,
a row per scheduler: jobs, span, mean / median / p95 wait, mean bounded
slowdown, utilization, makespan, wall time, jobs per second, referee
violations.  --json writes every replay's result (a list; `flux-schedkit
collect` reads it), --plot utilization and queue length over time, one
line per scheduler.  The trace options are those of `flux-schedkit
replay`.

Exit status: 0 if every replay finished every job with no referee
violation; 1 if any did not (the reasons are printed), an output could
not be written, or the output was closed early (a broken pipe); 2 for a
usage or input error (as replay, or a module that does not load); 130 if
interrupted (Ctrl-C).
"""

from __future__ import annotations

import argparse
import os

from flux_schedkit import trace_options
from flux_schedkit.console import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    ProgressBars,
    guarded,
    say,
)

COMMAND = "compare"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``flux-schedkit compare``."""
    trace_options.add_arguments(
        parser, "a scheduler to replay the trace with (repeat for each)"
    )
    parser.add_argument(
        "-j",
        "--processes",
        type=trace_options.positive,
        default=None,
        metavar="N",
        help="replays running at once (default: one per scheduler, at most "
        "the number of CPUs)",
    )
    out = parser.add_argument_group("outputs")
    out.add_argument(
        "--json", metavar="OUT.json", help="write every replay's result (a list)"
    )
    out.add_argument(
        "--plot",
        metavar="OUT.png",
        help="draw utilization and queue length over time, one line per scheduler",
    )


def run(args: argparse.Namespace) -> int:
    """Replay the trace with every scheduler; return the exit status."""
    return guarded(COMMAND, lambda: _compare(args))


def _labels(names: list[str]) -> list[str]:
    """The schedulers' names, numbered where one is given twice."""
    out = []
    for name in names:
        label, n = name, 1
        while label in out:
            n += 1
            label = f"{name}#{n}"
        out.append(label)
    return out


def _compare(args: argparse.Namespace) -> int:
    from conformance.referee import Referee
    from flux_schedkit.trace_options import InputError
    from replay.compare import Entry, ReplayFailed, compare
    from replay.results import table

    try:
        trace_options.check_writable(args.json, args.plot, inputs=(args.trace,))
        module_args = tuple(trace_options.module_args(args))
        entries = [
            Entry(label, trace_options.resolve_scheduler(name), module_args)
            for label, name in zip(_labels(args.scheduler), args.scheduler, strict=True)
        ]
        source = trace_options.prepare(args)
    except InputError as exc:
        say(COMMAND, str(exc))
        return EXIT_USAGE
    for line in trace_options.describe(source):
        print(line)
    processes = args.processes or min(len(entries), os.cpu_count() or 1)
    print(
        f"schedulers: {', '.join(e.label for e in entries)} "
        f"(args: {args.args or 'none'}; {processes} at a time)",
        flush=True,
    )
    total = len(source.workload.jobs)
    try:
        with ProgressBars(enabled=not args.no_progress) as bars:
            updates = [bars.add(entry.label, total) for entry in entries]
            docs = compare(
                entries,
                source,
                processes=processes,
                seed=args.seed,
                watch=Referee.attach,
                progress=updates if bars.shown else None,
            )
    except ReplayFailed as exc:
        say(COMMAND, str(exc))
        return EXIT_USAGE
    print()
    for line in table(docs):
        print(line)
    status = EXIT_OK
    for doc in docs:
        if trace_options.report(COMMAND, doc, prefix=f"{doc['scheduler']}: "):
            status = EXIT_FAILED
    try:
        _write_outputs(args, docs, source)
    except OSError as exc:
        say(COMMAND, f"cannot write {exc.filename or 'an output'}: {exc.strerror}")
        return EXIT_FAILED
    return status


def _write_outputs(args, docs: list[dict], source) -> None:
    from replay import pictures, results
    from replay.records import JobRecord
    from replay.swf import Window

    if args.json:
        results.write_json(args.json, docs)
        print(f"wrote {args.json}")
    if args.plot:
        cores = source.machine.size * source.machine.groups[0].cores
        records = {
            doc["scheduler"]: [JobRecord.from_dict(job) for job in doc["jobs"]]
            for doc in docs
        }
        # One stretch of time for all, so the lines share their bins.
        every = [r for rs in records.values() for r in rs]
        window = Window(
            min(r.submit for r in every),
            max(r.end if r.end is not None else r.submit for r in every),
        )
        series = {
            name: pictures.usage_series(rs, cores, window=window)
            for name, rs in records.items()
        }
        pictures.draw_usage(series, args.plot, title=docs[0]["trace"]["name"])
        print(f"wrote {args.plot}")
