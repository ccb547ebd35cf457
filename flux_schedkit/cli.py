"""Argument parsing and subcommand dispatch for ``flux-schedkit``.

A subcommand is one module under :mod:`flux_schedkit.commands`, named in
:data:`COMMANDS`.  The module provides:

- a docstring, whose first line is the one-line help shown by
  ``flux-schedkit --help``;
- ``add_arguments(parser)``, which adds the subcommand's own options to its
  :class:`argparse.ArgumentParser`;
- ``run(args) -> int``, called with the parsed :class:`argparse.Namespace`;
  its return value is the exit status.

Command modules should import anything heavy (the mock broker, the
conformance kit) inside ``run`` so that ``--help`` and ``version`` stay
quick and never install the flux-python substitute.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Sequence

from flux_schedkit.console import guarded

#: Subcommand name -> module implementing it.  Add new subcommands here.
COMMANDS: dict[str, str] = {
    "version": "flux_schedkit.commands.version",
    "path": "flux_schedkit.commands.path",
    "site-config": "flux_schedkit.commands.site_config",
    "run": "flux_schedkit.commands.run",
    "scenarios": "flux_schedkit.commands.scenarios",
    "selfcheck": "flux_schedkit.commands.selfcheck",
    "replay": "flux_schedkit.commands.replay",
    "compare": "flux_schedkit.commands.compare",
    "collect": "flux_schedkit.commands.collect",
    "conform": "flux_schedkit.commands.conform",
    "clauses": "flux_schedkit.commands.clauses",
}


def build_parser() -> argparse.ArgumentParser:
    """Return the top-level parser with one subparser per entry of COMMANDS."""
    parser = argparse.ArgumentParser(
        prog="flux-schedkit",
        description="Run, locate and check schedulers for the Flux resource "
        "manager written with flux-python's scheduler framework.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, module_name in COMMANDS.items():
        module = importlib.import_module(module_name)
        doc = (module.__doc__ or "").strip()
        summary = doc.splitlines()[0] if doc else ""
        sub = subparsers.add_parser(
            name,
            help=summary,
            description=doc,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        module.add_arguments(sub)
        sub.set_defaults(run=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` (default: ``sys.argv[1:]``), run the subcommand.

    Returns the exit status.  Usage errors, an unknown subcommand among
    them, are reported by argparse on stderr and give status 2; ``--help``
    gives 0.  For every subcommand, Ctrl-C gives 130 and a closed output
    pipe (``| head``) 1, each with a one-line message on stderr
    (:func:`flux_schedkit.console.guarded`).
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return _exit_status(exc)
    return int(guarded(args.command, lambda: args.run(args)))


def _exit_status(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    return 1


if __name__ == "__main__":
    import sys

    sys.exit(main())
