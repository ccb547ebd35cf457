"""List the conformance kit's clauses (id, statement, source, fault).

With --rst, print the reStructuredText catalogue the docs include.
Exit status: 0; 1 if the output could not be written (a closed pipe).
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
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        # Quietly, like a Unix filter whose reader went away (| head).
        import os

        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    return 0
