"""Merge replay results (--json files of replay or compare) into one table.

Each FILE is a result written by `flux-schedkit replay --json` or
`flux-schedkit compare --json`, or a folder whose *.json files are; the
rows (trace, scheduler and its arguments, then the figures) are sorted by
trace, then scheduler.  --csv writes the table, --json the rows with their
figures (without the per-job records).  This is the last step of a sweep
run as jobs of a Flux instance (docs: replay.rst, "Sweeps").

Exit status: 0; 1 if an output could not be written or the output was
closed early (a broken pipe); 2 if a file is missing or is not a replay
result (nothing is written then); 130 if interrupted (Ctrl-C).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from flux_schedkit import trace_options
from flux_schedkit.console import EXIT_FAILED, EXIT_OK, EXIT_USAGE, guarded, say

COMMAND = "collect"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``flux-schedkit collect``."""
    parser.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="replay results (.json), or folders of them",
    )
    parser.add_argument("--csv", metavar="OUT.csv", help="write the table as CSV")
    parser.add_argument(
        "--json", metavar="OUT.json", help="write the rows and their figures"
    )


def run(args: argparse.Namespace) -> int:
    """Print the merged table; return the exit status."""
    return guarded(COMMAND, lambda: _collect(args))


def _paths(names: list[str]) -> list[Path]:
    """The files named, a folder standing for its ``*.json`` files."""
    out: list[Path] = []
    for name in names:
        path = Path(name)
        if path.is_dir():
            found = sorted(path.glob("*.json"))
            if not found:
                raise FileNotFoundError(f"{name}: no .json files in this folder")
            out.extend(found)
        else:
            out.append(path)
    return out


def _collect(args: argparse.Namespace) -> int:
    from replay.results import (
        ResultFileError,
        label,
        read_document,
        table,
        write_json,
        write_table_csv,
    )

    docs: list[dict] = []
    try:
        trace_options.check_writable(args.csv, args.json, inputs=tuple(args.files))
        for path in _paths(args.files):
            for doc in read_document(path):
                doc["file"] = str(path)
                docs.append(doc)
    except trace_options.InputError as exc:
        say(COMMAND, str(exc))
        return EXIT_USAGE
    except FileNotFoundError as exc:
        say(
            COMMAND,
            exc.args[0] if exc.filename is None else f"{exc.filename}: no such file",
        )
        return EXIT_USAGE
    except (OSError, ResultFileError) as exc:
        say(COMMAND, str(exc))
        return EXIT_USAGE
    docs.sort(key=lambda d: (d["trace"]["name"], label(d["scheduler"], d["args"])))
    for line in table(docs, with_trace=True):
        print(line)
    try:
        if args.csv:
            write_table_csv(args.csv, docs)
            print(f"wrote {args.csv}")
        if args.json:
            rows = [
                {
                    "trace": d["trace"]["name"],
                    "scheduler": d["scheduler"],
                    "args": d["args"],
                    "file": d["file"],
                    "metrics": d["metrics"],
                    "violations": len(d.get("violations", [])),
                    "problems": d.get("problems", []),
                }
                for d in docs
            ]
            write_json(args.json, rows)
            print(f"wrote {args.json}")
    except OSError as exc:
        say(COMMAND, f"cannot write {exc.filename or 'an output'}: {exc.strerror}")
        return EXIT_FAILED
    return EXIT_OK
