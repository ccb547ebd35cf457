"""Print the absolute path of a reference scheduler's module file.

Use it to load a reference scheduler into a Flux instance:

    flux module load $(flux-schedkit path easy) [ARG...]

NAME is one of fifo, easy, conservative.  An unknown NAME is a usage error
(exit status 2) that lists the valid ones.
"""

from __future__ import annotations

import argparse
import sys

from flux_schedkit.reference import REFERENCE_SCHEDULERS, reference_path

EXIT_OK, EXIT_MISSING, EXIT_USAGE = 0, 1, 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``path NAME``."""
    parser.add_argument(
        "name", metavar="NAME", help="scheduler: " + ", ".join(REFERENCE_SCHEDULERS)
    )


def run(args: argparse.Namespace) -> int:
    """Print the path; 2 for an unknown name, 1 if the file is missing."""
    try:
        path = reference_path(args.name)
    except KeyError:
        print(
            f"flux-schedkit path: unknown scheduler {args.name!r}: "
            f"choose one of {', '.join(REFERENCE_SCHEDULERS)}",
            file=sys.stderr,
        )
        return EXIT_USAGE
    except FileNotFoundError as exc:
        print(f"flux-schedkit path: {exc}", file=sys.stderr)
        return EXIT_MISSING
    print(path)
    return EXIT_OK
