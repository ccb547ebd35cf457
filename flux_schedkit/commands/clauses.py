"""List the conformance kit's clauses (id, statement, source, fault).

With --rst, print the reStructuredText catalogue the docs include.
Exit status: 0; 1 if the output was closed early (a broken pipe, as with
`| head`: one line says so); 130 if interrupted.
"""

from __future__ import annotations

import argparse
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``flux-schedkit clauses``."""
    parser.add_argument("--rst", action="store_true", help="print reStructuredText")


def run(args: argparse.Namespace) -> int:
    """Print the catalogue."""
    from conformance.catalogue import catalogue_rst, catalogue_text

    text = catalogue_rst() if args.rst else catalogue_text()
    sys.stdout.write(text)
    sys.stdout.flush()  # a closed pipe is reported by the command line
    return 0
