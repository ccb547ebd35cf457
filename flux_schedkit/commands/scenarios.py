"""List the scenario library: one RFC 27 sequence per file.

Prints the path of every scenario file shipped with the mock broker, one a
line, ready for ``flux-schedkit run``; with --describe, each path is
followed by the scenario's description.
"""

from __future__ import annotations

import argparse
import textwrap


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``flux-schedkit scenarios``."""
    parser.add_argument(
        "--describe",
        "-d",
        action="store_true",
        help="print each scenario's description under its path",
    )


def run(args: argparse.Namespace) -> int:
    """Print the library's paths (and descriptions); always succeeds."""
    from conformance.scenarios.runner import library_paths, load_scenario

    for path in library_paths():
        print(path)
        if args.describe:
            description = load_scenario(path).description
            print(textwrap.indent(textwrap.fill(description, 72), "    "))
            print()
    return 0
