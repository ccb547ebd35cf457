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
import sys
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


class _Parser(argparse.ArgumentParser):
    """argparse's parser, except that help written to a closed pipe
    (``--help | head -0``) raises :class:`BrokenPipeError`, to be reported
    as for every subcommand; argparse itself drops write errors, which
    ended such a run silently with status 0."""

    def _print_message(self, message: str, file=None) -> None:
        if message and file is sys.stdout:
            file.write(message)
            file.flush()
        else:
            super()._print_message(message, file)


def build_parser() -> argparse.ArgumentParser:
    """Return the top-level parser with one subparser per entry of COMMANDS."""
    parser = _Parser(
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
    gives 0.  For every subcommand and for ``--help``, Ctrl-C gives 130
    and a closed output pipe (``| head``) 1, each with a one-line message
    on stderr (:func:`flux_schedkit.console.guarded`).
    """
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    parsed: list[argparse.Namespace] = []
    status = guarded(_command_named(argv), lambda: _parse(parser, argv, parsed))
    if not parsed:  # --help, a usage error, or help into a closed pipe
        return status
    args = parsed[0]
    return int(guarded(args.command, lambda: args.run(args)))


def _parse(
    parser: argparse.ArgumentParser,
    argv: list[str],
    parsed: list[argparse.Namespace],
) -> int:
    """Parse *argv* into *parsed*; the status of ``--help`` or a usage error."""
    try:
        parsed.append(parser.parse_args(argv))
    except SystemExit as exc:
        return _exit_status(exc)
    return 0


def _command_named(argv: list[str]) -> str:
    """The subcommand *argv* names ("" for none): the top-level parser
    takes no option with a value, so it is the first word not an option."""
    return next((word for word in argv if not word.startswith("-")), "")


def _exit_status(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    return 1


if __name__ == "__main__":
    sys.exit(main())
