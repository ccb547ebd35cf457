"""Check the substitution, then run the scenario library on every reference scheduler.

This is the project's main job until the conformance kit exists.  It
first runs the startup check of the flux-python substitution and prints
what is substituted; then it runs every scenario of the mock broker's
library (``flux-schedkit scenarios``) against each reference scheduler
(``fifo``, ``easy``, ``conservative``), or against the modules given with
--scheduler, and prints one verdict per run.

Exit status: 0 if every run passed; 1 if any failed (the reasons follow
the table); 2 if the substitution does not fit the installed flux-python.
"""

from __future__ import annotations

import argparse
import sys

EXIT_OK, EXIT_FAILED, EXIT_ERROR = 0, 1, 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``flux-schedkit selfcheck``."""
    parser.add_argument(
        "--scheduler",
        action="append",
        metavar="PATH[:Class]",
        help="check this module instead of the reference schedulers "
        "(may be given more than once)",
    )
    parser.add_argument(
        "--verbose",
        "-v",
        action="store_true",
        help="print the transcript of every failed run",
    )


def _substitution_report() -> int:
    from mock_broker import flux_substitute

    if flux_substitute.native_flux_available():
        print("a native libflux is importable: the real flux bindings are used")
        return EXIT_OK
    from mock_broker.flux_substitute import startup_check

    try:
        wheel = startup_check.check_wheel()
    except flux_substitute.SubstitutionError as exc:
        print(f"flux-schedkit selfcheck: {exc}", file=sys.stderr)
        return EXIT_ERROR
    flux_substitute.install()
    print(
        f"flux-python {wheel.version} at {wheel.flux_dir}: substitution fits "
        f"({len(wheel.scanned)} wheel modules scanned)"
    )
    print("  kept from the wheel: " + ", ".join(flux_substitute.KEPT_MODULES))
    print("  substituted: " + ", ".join(flux_substitute.SUBSTITUTES))
    return EXIT_OK


def _targets(args: argparse.Namespace) -> list[tuple[str, str]]:
    if args.scheduler:
        return [(spec, spec) for spec in args.scheduler]
    from flux_schedkit.reference import REFERENCE_SCHEDULERS, reference_path

    return [(name, str(reference_path(name))) for name in REFERENCE_SCHEDULERS]


def run(args: argparse.Namespace) -> int:
    """Run the check; return the exit status."""
    status = _substitution_report()
    if status != EXIT_OK:
        return status
    try:
        targets = _targets(args)
    except (KeyError, FileNotFoundError) as exc:
        print(f"flux-schedkit selfcheck: {exc}", file=sys.stderr)
        return EXIT_ERROR
    from conformance.scenarios.runner import library_paths, run_scenario

    failed = []
    total = 0
    print(f"\n{'scheduler':<16} {'scenario':<32} verdict")
    for label, spec in targets:
        for path in library_paths():
            total += 1
            result = run_scenario(path, scheduler=spec)
            verdict = "PASS" if result.passed else "FAIL"
            print(f"{label:<16} {path.stem:<32} {verdict}", flush=True)
            if not result.passed:
                failed.append((label, path.stem, result))
    print(f"\n{total - len(failed)} of {total} scenario runs passed")
    for label, name, result in failed:
        print(f"\n--- {label} / {name}:")
        for reason in result.reasons():
            print(reason)
        if args.verbose:
            print("\n".join(result.transcript_lines()))
    return EXIT_FAILED if failed else EXIT_OK
