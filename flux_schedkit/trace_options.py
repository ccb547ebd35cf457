"""Command-line options shared by ``replay`` and ``compare``: the trace,
its selection, the machine and the mapping of trace jobs to Flux jobs.

:func:`add_arguments` adds them to a parser; :func:`prepare` turns parsed
options into a :class:`replay.workload.ReplayInput`, or raises
:class:`InputError` with a one-line message (exit status 2), as
:func:`reading` does for any code that reads a trace.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import re
from pathlib import Path

_UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([smhdw]?)\s*$")


class InputError(ValueError):
    """Options or inputs that cannot be used; the message says why."""


def _int_at_least(least: int, what: str):
    """An argparse type: an integer of at least *least*."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < least:
            raise argparse.ArgumentTypeError(f"{value} {what}")
        return value

    return parse


#: argparse types: an integer of at least 1; of at least 0.
positive = _int_at_least(1, "must be at least 1")
not_negative = _int_at_least(0, "must not be negative")


def above_zero(text: str) -> float:
    """argparse type: a finite number above 0 (a load, a budget or a
    timeout in seconds)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < value < math.inf:  # also refuses nan
        raise argparse.ArgumentTypeError(f"{text}: must be above 0 and finite")
    return value


def duration(text: str) -> float:
    """``90``, ``90s``, ``15m``, ``6h``, ``2d`` or ``1w`` -> seconds."""
    match = _DURATION.match(text)
    if not match:
        raise ValueError(f"{text!r} is not a time (seconds, or with s, m, h, d, w)")
    return float(match.group(1)) * _UNITS[match.group(2)]


def window(text: str):
    """argparse type: ``START:END`` in the trace's time (either side may
    be empty) -> :class:`replay.swf.Window`."""
    from replay.swf import Window

    start, sep, end = text.partition(":")
    if not sep:
        raise argparse.ArgumentTypeError(f"{text!r}: expected START:END")
    try:
        lo = duration(start) if start.strip() else None
        hi = duration(end) if end.strip() else None
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if lo is not None and hi is not None and hi <= lo:
        raise argparse.ArgumentTypeError(f"{text!r}: END must be after START")
    return Window(lo, hi)


def add_arguments(parser: argparse.ArgumentParser, scheduler_help: str) -> None:
    """--scheduler, and the trace, selection, machine and mapping options."""
    parser.add_argument(
        "--scheduler",
        action="append",
        required=True,
        metavar="NAME|PATH.py|pkg.module[:Class]",
        help=scheduler_help,
    )
    parser.add_argument("trace", metavar="TRACE", help="an SWF file, plain or gzip")
    parser.add_argument(
        "--args",
        default="",
        help='module arguments, e.g. "queue-depth=unlimited" (quoted, shell-split)',
    )
    select = parser.add_argument_group("selecting jobs (in this order)")
    select.add_argument(
        "--window",
        type=window,
        metavar="START:END",
        help="only jobs submitted from START to END in the trace's time "
        "(seconds, or 2d, 6h, 15m; either side may be empty)",
    )
    select.add_argument(
        "--skip",
        type=not_negative,
        default=0,
        metavar="N",
        help="pass over the first N usable jobs",
    )
    select.add_argument(
        "--limit", type=positive, metavar="N", help="replay at most N jobs"
    )
    select.add_argument(
        "--skip-malformed",
        action="store_true",
        help="pass over malformed lines (counted) instead of stopping",
    )
    machine = parser.add_argument_group(
        "the machine (default: from the trace's MaxNodes and MaxProcs)"
    )
    machine.add_argument(
        "--nodes", type=positive, metavar="N", help="nodes in the machine"
    )
    machine.add_argument(
        "--cores-per-node", type=positive, metavar="N", help="cores per node"
    )
    machine.add_argument(
        "--gpus-per-node",
        type=not_negative,
        default=0,
        metavar="N",
        help="GPUs per node (default 0; whole-node jobs hold them all)",
    )
    mapping = parser.add_argument_group("trace jobs as Flux jobs")
    mapping.add_argument(
        "--whole-nodes",
        action="store_true",
        help="a job asks for the whole nodes its processors fill "
        "(default: one-core slots anywhere)",
    )
    mapping.add_argument(
        "--exact-estimates",
        action="store_true",
        help="every job's limit is its run time (default: the requested "
        "time, the run time where that is unknown)",
    )
    parser.add_argument("--seed", type=int, default=0, help="the broker's seed")
    parser.add_argument(
        "--no-progress", action="store_true", help="no progress bar, even on a terminal"
    )


def prepare(args: argparse.Namespace):
    """The :class:`replay.workload.ReplayInput` the options describe.

    Raises:
        InputError: the trace cannot be read or selects nothing, or the
            machine's size is unknown.
    """
    from replay.workload import JobMapping
    from replay.workload import prepare as prepare_input

    with reading(args.trace):
        return prepare_input(
            args.trace,
            window=args.window,
            skip=args.skip,
            limit=args.limit,
            skip_malformed=args.skip_malformed,
            nodes=args.nodes,
            cores_per_node=args.cores_per_node,
            gpus_per_node=args.gpus_per_node,
            mapping=JobMapping(args.whole_nodes, args.exact_estimates),
        )


@contextlib.contextmanager
def reading(trace: str):
    """Turn what goes wrong while reading *trace* into one
    :class:`InputError` line: a file that cannot be opened (named with
    the reason), a malformed or truncated trace, a selection with nothing
    to replay, an unknown machine size (their messages name the file)."""
    from replay.swf import SWFError
    from replay.workload import NoMachineSize, NothingToReplay

    try:
        yield
    except OSError as exc:
        raise InputError(f"{trace}: {exc.strerror or exc}") from None
    except (SWFError, NoMachineSize, NothingToReplay) as exc:
        raise InputError(str(exc)) from None


def module_args(args: argparse.Namespace) -> list[str]:
    """``--args`` split as a shell would."""
    import shlex

    try:
        return shlex.split(args.args)
    except ValueError as exc:
        raise InputError(f"--args {args.args!r}: {exc}") from None


def resolve_scheduler(spec: str) -> str:
    """A reference scheduler's name -> its module file; anything else as is.

    Raises:
        InputError: a reference scheduler's file is missing, or a
            ``PATH.py`` does not exist.
    """
    from flux_schedkit.reference import REFERENCE_SCHEDULERS, reference_path

    if spec in REFERENCE_SCHEDULERS:
        try:
            return str(reference_path(spec))
        except FileNotFoundError as exc:
            raise InputError(str(exc)) from None
    path = spec.partition(":")[0]
    if path.endswith(".py") and not Path(path).is_file():
        raise InputError(f"{path}: no such scheduler module file")
    return spec


def check_writable(*paths: str | None, inputs: tuple = ()) -> None:
    """Raise :class:`InputError` unless every given output path can be
    written (its folder exists and is writable), no two of them name the
    same file and none names one of *inputs* (the files the command reads,
    which the write would replace); creates nothing."""
    read = {_identity(p) for p in inputs if p}
    seen: dict[tuple, str] = {}
    for path in paths:
        if not path:
            continue
        same = _identity(path)
        if same in read:
            raise InputError(f"{path}: is what this command reads; not overwritten")
        if same in seen:
            raise InputError(f"{path}: named for two outputs (also as {seen[same]})")
        seen[same] = path
        folder = os.path.dirname(os.path.abspath(path))
        if os.path.isdir(path):
            raise InputError(f"{path}: is a directory")
        if not os.path.isdir(folder):
            raise InputError(f"{path}: folder {folder} does not exist")
        if not os.access(folder, os.W_OK):
            raise InputError(f"{path}: folder {folder} is not writable")


def _identity(path: str) -> tuple:
    """What makes two names one file: device and inode if it exists (hard
    and symbolic links), else its resolved path."""
    try:
        st = os.stat(path)
    except OSError:
        return ("path", os.path.realpath(path))
    return ("inode", st.st_dev, st.st_ino)


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def describe(source) -> list[str]:
    """What is replayed, in a few lines: the trace and what was left out,
    the machine and where its size came from, the mapping."""
    trace, workload, machine = source.trace, source.workload, source.machine
    group = machine.groups[0]
    left = [
        f"{trace.unusable:,} unusable",
        f"{trace.malformed:,} malformed skipped",
    ]
    if source.window is not None:
        left.append(f"{trace.outside_window:,} outside the window {source.window}")
    if trace.passed_over:
        left.append(f"{trace.passed_over:,} passed over by --skip")
    lines = [
        f"trace: {Path(trace.path).name}: {len(workload.jobs):,} jobs to replay "
        f"({trace.records:,} records read; " + ", ".join(left) + ")",
        f"machine: {_count(machine.size, 'node')} x {_count(group.cores, 'core')}"
        + (f" x {_count(group.gpus, 'GPU')}" if group.gpus else "")
        + f" (from {source.machine_source})",
    ]
    shape = (
        "whole nodes, exclusively"
        if source.mapping.whole_nodes
        else "one-core slots anywhere"
    )
    if source.mapping.exact_estimates:
        limits = "run times (--exact-estimates)"
    else:
        unknown = workload.estimated_from_run
        limits = "requested times" + (
            f"; {unknown:,} jobs have none, so their run time is their estimate"
            if unknown
            else ""
        )
    lines.append(f"jobs: {shape}; limits: {limits}")
    if workload.never_fit:
        shown = ", ".join(
            f"{job.trace_id} ({job.why})" for job in workload.never_fit[:3]
        )
        more = len(workload.never_fit) - 3
        lines.append(
            f"never fit: {len(workload.never_fit):,} jobs ask for more than the "
            f"machine has and are left out: {shown}"
            + (f" and {more:,} more" if more > 0 else "")
        )
    return lines


def report(command: str, doc: dict, prefix: str = "") -> bool:
    """Print, one line each on stderr, why a replay (its JSON result
    *doc*) left jobs unfinished and what the referee saw; True if there
    was anything to say."""
    from flux_schedkit.console import say

    for problem in doc["problems"]:
        say(command, prefix + problem)
    if doc["violations"]:
        say(
            command,
            f"{prefix}the referee saw {len(doc['violations'])} violations: "
            + ", ".join(sorted(set(doc["violations"]))),
        )
    return bool(doc["problems"] or doc["violations"])


__all__ = [
    "InputError",
    "add_arguments",
    "check_writable",
    "describe",
    "duration",
    "module_args",
    "not_negative",
    "positive",
    "prepare",
    "report",
    "resolve_scheduler",
    "window",
]
