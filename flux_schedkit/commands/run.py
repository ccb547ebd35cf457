"""Run scenario files against a scheduler module on the mock broker.

Each SCENARIO is a YAML file (see docs/scenarios.rst), or the name of a
scenario in the library that 'flux-schedkit scenarios' lists.  The
scheduler is the scenario's own scheduler.path unless --scheduler names
one (fifo, easy or conservative for a reference scheduler, a PATH.py or a
pkg.module, either with :Class).  For each scenario the readable transcript is printed (unless
--quiet), then every unmet expectation and every unexpected referee
violation with the transcript around it, then a one-line verdict.

Exit status: 0 if every scenario met its expectations with no violation
it did not expect; 1 if any did not, or the output was closed early (a
broken pipe); 2 for a usage error, a scenario file error (the message
names the file, the step and the key), or a scheduler that could not be
loaded; 130 if interrupted (Ctrl-C), even inside a scheduler callback.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

from flux_schedkit.console import guarded

EXIT_OK, EXIT_FAILED, EXIT_ERROR = 0, 1, 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``flux-schedkit run``."""
    parser.add_argument(
        "--scheduler",
        metavar="NAME|PATH[:Class]",
        help="the scheduler module: fifo, easy or conservative (a reference "
        "scheduler), a .py file or a dotted module, optionally with :Class "
        "(overrides the scenario's scheduler.path)",
    )
    parser.add_argument(
        "--args",
        default="",
        metavar="ARGS",
        help='module arguments, such as "queue-depth=2 log-level=debug"; each '
        "replaces the scenario's argument with the same key",
    )
    parser.add_argument(
        "--transcript",
        metavar="FILE",
        help="write every transcript entry to FILE as JSON lines, each with "
        'a "scenario" key',
    )
    parser.add_argument(
        "--quiet",
        "-q",
        action="store_true",
        help="print only the problems and the verdicts, not the transcripts",
    )
    parser.add_argument("scenarios", nargs="+", metavar="SCENARIO")


def run(args: argparse.Namespace) -> int:
    """Validate every scenario, run each, report; return the exit status."""
    return guarded("run", lambda: _run(args))


def _run(args: argparse.Namespace) -> int:
    from conformance.scenarios.runner import ScenarioError, load_scenario
    from flux_schedkit.reference import REFERENCE_SCHEDULERS, reference_path

    if args.scheduler in REFERENCE_SCHEDULERS:  # as conform and replay take it
        try:
            args.scheduler = str(reference_path(args.scheduler))
        except FileNotFoundError as exc:
            print(f"flux-schedkit run: {exc}", file=sys.stderr)
            return EXIT_ERROR

    try:
        module_args = shlex.split(args.args)
    except ValueError as exc:
        print(f"flux-schedkit run: --args: {exc}", file=sys.stderr)
        return EXIT_ERROR
    scenarios = []
    errors = []
    for name in args.scenarios:
        try:
            scenarios.append(load_scenario(resolve_scenario(name)))
        except ScenarioError as exc:
            errors.append(str(exc))
    if errors:
        for error in errors:
            print(f"flux-schedkit run: {error}", file=sys.stderr)
        return EXIT_ERROR
    transcript = None
    if args.transcript:
        try:
            transcript = open(args.transcript, "w", encoding="utf-8")
        except OSError as exc:
            print(f"flux-schedkit run: --transcript: {exc}", file=sys.stderr)
            return EXIT_ERROR
    outcomes = []
    try:
        for scenario in scenarios:
            outcomes.append(_run_one(scenario, args, module_args, transcript))
    finally:
        if transcript is not None:
            transcript.close()
    if len(scenarios) > 1:
        counts = [outcomes.count(s) for s in (EXIT_OK, EXIT_FAILED, EXIT_ERROR)]
        print(
            "{} scenarios: {} passed, {} failed, {} could not run".format(
                len(scenarios), *counts
            )
        )
    return max(outcomes)


def resolve_scenario(name: str) -> str:
    """A path as given, or a library scenario's path for its bare name."""
    if Path(name).exists() or "/" in name or name.endswith((".yaml", ".yml")):
        return name
    from conformance.scenarios.runner import library_paths

    for path in library_paths():
        if path.stem == name:
            return str(path)
    return name  # let loading report "No such file"


def _run_one(scenario, args, module_args: list[str], transcript) -> int:
    from conformance.scenarios.runner import ScenarioError, run_scenario

    label = f"{scenario.name} ({scenario.path})"
    try:
        result = run_scenario(scenario, args.scheduler, module_args)
    except ScenarioError as exc:
        print(f"flux-schedkit run: {exc}", file=sys.stderr)
        print(f"ERROR {label}")
        return EXIT_ERROR
    if not args.quiet:
        print(f"== {label}")
        for line in result.transcript_lines():
            print(line)
    if transcript is not None:
        for entry in result.broker.transcript.entries():
            record = {"scenario": scenario.name, **entry.to_dict()}
            transcript.write(json.dumps(record, sort_keys=True) + "\n")
    if result.load_error:
        print(
            f"flux-schedkit run: {scenario.name}: {result.load_error}", file=sys.stderr
        )
        print(f"ERROR {label}: the scheduler failed to load")
        return EXIT_ERROR
    if result.passed:
        print(f"PASS  {label}")
        return EXIT_OK
    for reason in result.reasons():
        first, *rest = reason.splitlines()
        print(f"  - {first}")
        for line in rest:
            print(f"    {line}")
    problems = len(result.failures) + len(result.violations)
    print(f"FAIL  {label}: {problems} problem{'s' if problems != 1 else ''}")
    return EXIT_FAILED
