"""Certify a scheduler module clause by clause (the conformance kit).

Runs the kit's suites (protocol, policy, robustness, scale) on the mock
broker against the scheduler named with --scheduler, each probe in a child
process with budgets, and prints a table of clauses with their verdicts,
then the evidence of every failure.  Without --scheduler it certifies the
three reference schedulers one after another.

--scheduler takes fifo, easy or conservative (a reference scheduler; its
policy is implied), a PATH.py, or a pkg.module, either with :Class.

Exit status: 0 if every applicable clause passed; 1 if any failed (a
module that fails to load even without --args fails load.reaches-reactor),
a certificate or JUnit file could not be written, or the kit itself failed
(it says how, e.g. its probes could not be collected); 2 for a usage or
input error, found before any probe runs (module file not found, syntax or
import error in it, bad argument, a --clause that matches no clause, a
certificate or JUnit path whose folder is missing or not writable, --args
the module refuses at load although it loads without them); 130 if
interrupted (Ctrl-C).
"""

from __future__ import annotations

import argparse
import os
import sys

from flux_schedkit.trace_options import (
    InputError,
    above_zero,
    check_writable,
    positive,
)

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
POLICIES = ("fifo", "easy", "conservative", "any")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``flux-schedkit conform``."""
    parser.add_argument(
        "--scheduler",
        action="append",
        metavar="NAME|PATH.py|pkg.module[:Class]",
        help="the scheduler to certify (repeatable; default: the three "
        "reference schedulers)",
    )
    parser.add_argument(
        "--args", default="", help='module arguments, e.g. "queue-depth=8"'
    )
    parser.add_argument(
        "--policy",
        choices=POLICIES,
        default=None,
        help="declared policy (default: implied by a reference name, else any)",
    )
    parser.add_argument(
        "--certificate", metavar="FILE.json", help="write the JSON certificate"
    )
    parser.add_argument(
        "--junit", metavar="FILE.xml", help="write clause-level JUnit XML"
    )
    parser.add_argument(
        "-k",
        "--clause",
        action="append",
        metavar="PATTERN",
        help="judge only clauses whose id matches (fnmatch, or a prefix such "
        "as 'alloc'); repeatable",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of every random choice"
    )
    parser.add_argument(
        "--examples",
        type=positive,
        default=20,
        help="examples per randomized probe (default 20; 10000 for a deep run)",
    )
    parser.add_argument(
        "-n",
        "--numprocesses",
        type=_workers,
        default="auto",
        metavar="N",
        help="parallel workers, pytest-xdist style (default auto; 0 for none)",
    )
    # A budget is what keeps a hanging scheduler from hanging the kit.
    parser.add_argument(
        "--callback-budget",
        type=above_zero,
        metavar="SECONDS",
        help="wall budget per callback",
    )
    parser.add_argument(
        "--probe-budget",
        type=above_zero,
        metavar="SECONDS",
        help="wall budget per probe",
    )
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="list each probe as it runs"
    )


def _workers(text: str) -> str:
    """argparse type of ``-n``: ``auto``, ``logical`` or a count >= 0, as given."""
    if text in ("auto", "logical") or (text.isascii() and text.isdigit()):
        return text
    raise argparse.ArgumentTypeError(f"{text!r}: a number of workers, or auto")


def _targets(args) -> list[tuple[str, str, str]]:
    """(label, target, policy) for every scheduler to certify."""
    from flux_schedkit.reference import REFERENCE_SCHEDULERS, reference_path

    names = args.scheduler or list(REFERENCE_SCHEDULERS)
    out = []
    for name in names:
        if name in REFERENCE_SCHEDULERS:
            out.append((name, str(reference_path(name)), args.policy or name))
        else:
            out.append((name, name, args.policy or "any"))
    return out


def _suite_path() -> str:
    """The kit's test module, found without importing the kit (pytest must
    import its plugin itself, or it warns that it cannot rewrite it)."""
    import importlib.util

    return importlib.util.find_spec("conformance.suite").origin


def _pytest_args(args, target: str, policy: str, suffix: str) -> list[str]:
    # Every value the user gave is joined to its option with "=": pytest
    # would read a separate value starting with "-" (``--args=-x``) as an
    # option of its own.
    suite = _suite_path()
    out = [
        suite,
        "-p",
        "conformance.plugin",
        "-p",
        "no:cacheprovider",
        "-c",
        os.devnull,
        "--rootdir",
        os.path.dirname(suite),
        "--tb=no",
        # The kit's report is the output: pytest's list of failed tests and
        # its closing count name probes (tests of the kit's own module), not
        # clauses.  Errors (the kit's own, as in collecting its probes) are
        # still listed.
        *(["-qq", "-rE"] if not args.verbose else ["-v"]),
        "--no-header",
        # This command has imported flux_schedkit and conformance before
        # pytest starts, so pytest cannot rewrite their asserts (they hold
        # none that tests rely on) and would warn about it on every run.
        "-W",
        "ignore::pytest.PytestAssertRewriteWarning",
        f"--schedkit-scheduler={target}",
        f"--schedkit-args={args.args}",
        f"--schedkit-policy={policy}",
        f"--schedkit-seed={args.seed}",
        f"--schedkit-examples={args.examples}",
    ]
    for pattern in args.clause or ():
        out.append(f"--schedkit-clause={pattern}")
    if args.certificate:
        out.append(f"--schedkit-certificate={_suffixed(args.certificate, suffix)}")
    if args.junit:
        out.append(f"--schedkit-junit={_suffixed(args.junit, suffix)}")
    if args.callback_budget:
        out.append(f"--schedkit-callback-budget={args.callback_budget}")
    if args.probe_budget:
        out.append(f"--schedkit-probe-budget={args.probe_budget}")
    if args.numprocesses not in ("0", ""):
        out += ["-n", args.numprocesses, "--dist", "load"]
    return out


def _suffixed(path: str, suffix: str) -> str:
    """``cert.json`` -> ``cert-easy.json`` when several schedulers run."""
    if not suffix:
        return path
    root, ext = os.path.splitext(path)
    return f"{root}-{suffix}{ext}"


def run(args: argparse.Namespace) -> int:
    """Certify each target; return the worst exit status."""
    import pytest

    from conformance.plugin import select_clauses, usage_problem

    try:
        targets = _targets(args)
    except (KeyError, FileNotFoundError) as exc:
        print(
            f"flux-schedkit conform: {exc.args[0] if exc.args else exc}",
            file=sys.stderr,
        )
        return EXIT_USAGE
    several = len(targets) > 1
    # Each run's files are suffixed with its scheduler when several run.
    suffixes = [_safe(label) if several else "" for label, _, _ in targets]
    # What holds for every target is asked once, before any of them runs.
    try:
        select_clauses(args.clause)
    except pytest.UsageError as exc:
        print(f"flux-schedkit conform: {exc}", file=sys.stderr)
        return EXIT_USAGE
    problem = usage_problem(targets[0][1], args.args, targets[0][2], importing=False)
    try:
        if problem is not None:
            raise InputError(problem)
        # The module files certified are read: never written over.
        modules = [t.partition(":")[0] for _, t, _ in targets]
        for suffix in suffixes:
            check_writable(
                args.certificate and _suffixed(args.certificate, suffix),
                args.junit and _suffixed(args.junit, suffix),
                inputs=tuple(m for m in modules if os.path.isfile(m)),
            )
    except InputError as exc:
        print(f"flux-schedkit conform: {exc}", file=sys.stderr)
        return EXIT_USAGE
    statuses = []
    for (label, target, policy), suffix in zip(targets, suffixes, strict=True):
        # Asked here so that the line is this command's, not pytest's
        # "ERROR:" one; the plugin is then told not to ask again.
        problem = usage_problem(target, args.args, policy)
        if problem is None:
            code = pytest.main(
                [*_pytest_args(args, target, policy, suffix), "--schedkit-checked"]
            )
            status = _status(int(code))
        else:
            print(f"flux-schedkit conform: {problem}", file=sys.stderr)
            status = EXIT_USAGE
        statuses.append(status)
        if status == EXIT_INTERRUPTED:
            print("flux-schedkit conform: interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED
        if status == EXIT_USAGE and several:
            print(
                f"flux-schedkit conform: {label}: usage or input error", file=sys.stderr
            )
    for status in (EXIT_USAGE, EXIT_FAILED):
        if status in statuses:
            return status
    return EXIT_OK


def _safe(label: str) -> str:
    base = os.path.splitext(os.path.basename(label.partition(":")[0]))[0]
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in base)


def _status(code: int) -> int:
    """pytest's exit code -> ours."""
    return {
        0: EXIT_OK,
        1: EXIT_FAILED,
        2: EXIT_INTERRUPTED,
        3: EXIT_FAILED,  # the kit failed (it or pytest says how)
        4: EXIT_USAGE,
        5: EXIT_USAGE,  # nothing to run
    }.get(code, EXIT_USAGE)
