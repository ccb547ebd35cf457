"""Instructions a job of the end-to-end run, counted by valgrind: a figure
that does not move with the load of the machine.

Timings on a shared machine move by tens of percent from one minute to
the next, more than most changes to a scheduler.  Instructions executed
do not: each scheduler here runs ``run_once`` of
``benchmarks/mock_throughput.py`` (the same jobs, load and machine) in a
fresh process under ``valgrind --tool=cachegrind --cache-sim=no``, once
with ``--jobs`` jobs and once with one job (Python's start, the imports,
loading the module), and the table shows the difference over the jobs:
instructions a job, and the ratio to the minimal scheduler's.  The runs
go ``--parallel`` at a time (default 2), since the counts do not depend
on what else runs.  ``--tree DIR`` (repeatable) runs every scheduler from
each checkout of this project named (a ``git worktree`` of another
commit, say) as well as this one: a before and after in one table, with
each tree's ratio to the first.

Instructions are not time: a mispredicted branch or a cache miss costs
many, and code that runs more kinds of Python per job runs slower for as
many instructions (``docs/performance.rst`` has an example).  Use it to
compare two versions of the same code, not two different programs.

    python benchmarks/instructions.py [--jobs 2000] [--load 1.93]
        [--schedulers minimal fifo easy conservative:8 PATH.py]
        [--shape slots|tasks] [--nodes 64] [--cores 16]
        [--tree DIR ...] [--parallel 2] [--valgrind valgrind]

Exit status: 0 done, 1 valgrind missing or a run failed (or the output
was closed early), 2 a bad argument, 130 interrupted.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: The checkout this script belongs to.
ROOT = HERE.parent

_REFS = re.compile(r"I\s+refs:\s+([\d,]+)")


class RunFailed(Exception):
    """valgrind is missing, or a run did not end as it should."""


def instructions_of(log: str) -> int:
    """The instruction count (``I refs``) of a cachegrind log.

    Raises:
        ValueError: the log holds none.
    """
    found = _REFS.search(log)
    if found is None:
        raise ValueError("no 'I refs' line in valgrind's output")
    return int(found.group(1).replace(",", ""))


def _child(argv: list[str]) -> int:
    """``--child TREE NAME JOBS SHAPE NODES CORES LOAD``: one run, from the
    checkout TREE."""
    tree, name, njobs, shape, nodes, cores, load = argv
    sys.path[:0] = [os.path.join(tree, "benchmarks"), os.path.join(tree, "lib"), tree]
    import mock_throughput

    try:
        mock_throughput.run_once(
            int(njobs), name, shape, int(nodes), int(cores), float(load)
        )
    except mock_throughput.BenchmarkFailed as exc:
        print(exc, file=sys.stderr)
        return 1
    return 0


#: The valgrind processes running, stopped on Ctrl-C.
_RUNNING: set[subprocess.Popen] = set()


def count(valgrind: str, tree: Path, name: str, njobs: int, args) -> int:
    """Instructions of one run of *njobs* jobs of scheduler *name* from
    checkout *tree*, in a fresh process under valgrind."""
    with tempfile.TemporaryDirectory(prefix="schedkit-instructions-") as tmp:
        log = os.path.join(tmp, "valgrind.log")
        command = [
            valgrind,
            "--tool=cachegrind",
            "--cache-sim=no",
            "--cachegrind-out-file=/dev/null",
            f"--log-file={log}",
            sys.executable,
            str(HERE / "instructions.py"),
            "--child",
            str(tree),
            name,
            str(njobs),
            args.shape,
            str(args.nodes),
            str(args.cores),
            repr(args.load),
        ]
        with subprocess.Popen(
            command,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tree,
            # The same hashes run after run: set order moves counts by ~1%.
            env={**os.environ, "PYTHONHASHSEED": "0"},
            start_new_session=True,  # Ctrl-C reaches them through report()
        ) as child:
            _RUNNING.add(child)
            try:
                _, stderr = child.communicate()
            finally:
                _RUNNING.discard(child)
        said = (stderr.strip().splitlines() or ["(nothing on stderr)"])[-1]
        if child.returncode != 0:
            raise RunFailed(f"{name} ({tree}): {said}")
        try:
            with open(log, encoding="utf-8") as f:
                return instructions_of(f.read())
        except (OSError, ValueError) as exc:
            raise RunFailed(f"{name} ({tree}): {exc}") from None


def report(args) -> int:
    """Count every run and print the table; the exit status."""
    from flux_schedkit.console import EXIT_FAILED, EXIT_OK, say

    valgrind = shutil.which(args.valgrind)
    if valgrind is None:
        say("", f"{args.valgrind}: not found (install valgrind)", prog="instructions")
        return EXIT_FAILED
    trees = [ROOT, *args.tree]
    # A module file named by a relative path is the same file in every tree
    # (each run starts in its tree).
    args.schedulers = [
        os.path.abspath(name) if name.endswith(".py") else name
        for name in args.schedulers
    ]
    runs = [
        (tree, name, njobs)
        for tree in trees
        for name in args.schedulers
        for njobs in (1, args.jobs)
    ]
    print(
        f"{args.jobs} jobs, offered load {args.load:g}, {args.nodes} x "
        f"{args.cores} cores ({args.shape}); instructions counted by valgrind"
    )
    with ThreadPoolExecutor(max_workers=args.parallel) as pool:
        futures = {
            run: pool.submit(count, valgrind, run[0], run[1], run[2], args)
            for run in runs
        }
        try:
            counts = {run: future.result() for run, future in futures.items()}
        except (RunFailed, KeyboardInterrupt) as exc:
            for future in futures.values():
                future.cancel()
            for child in list(_RUNNING):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(child.pid, signal.SIGKILL)  # and what it started
            if isinstance(exc, KeyboardInterrupt):
                raise
            say("", str(exc), prog="instructions")
            return EXIT_FAILED
    per_job = {
        (tree, name): (counts[tree, name, args.jobs] - counts[tree, name, 1])
        / (args.jobs - 1)
        for tree in trees
        for name in args.schedulers
    }
    print(
        f"{'tree':<24} {'scheduler':<20} {'total':>10} {'start-up':>10} "
        f"{'a job':>10} {'vs minimal':>10} {'vs tree 1':>10}"
    )
    for tree in trees:
        base = per_job.get((tree, "minimal"))
        for name in args.schedulers:
            mine = per_job[tree, name]
            vs_minimal = f"{mine / base:.3f}x" if base else "-"
            vs_first = f"{mine / per_job[ROOT, name]:.3f}x"
            print(
                f"{_short(tree):<24} {_label(name):<20} "
                f"{counts[tree, name, args.jobs]:>10.4g} "
                f"{counts[tree, name, 1]:>10.4g} {mine:>10,.0f} {vs_minimal:>10} "
                f"{vs_first:>10}",
                flush=True,
            )
    return EXIT_OK


def _short(tree: Path) -> str:
    text = str(tree)
    return text if len(text) <= 24 else "..." + text[-21:]


def _label(name: str) -> str:
    return os.path.basename(name) if name.endswith(".py") else name


def _checkout(text: str) -> Path:
    """argparse type of ``--tree``: a checkout of this project."""
    path = Path(text).resolve()
    if not (path / "benchmarks" / "mock_throughput.py").is_file():
        raise argparse.ArgumentTypeError(
            f"{text}: not a checkout of this project (no benchmarks/mock_throughput.py)"
        )
    return path


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        raise SystemExit(_child(sys.argv[2:]))
    sys.path[:0] = [str(HERE), str(ROOT)]
    from mock_throughput import check_schedulers

    from flux_schedkit.console import guarded
    from flux_schedkit.trace_options import above_zero, positive

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=positive, default=2000)
    parser.add_argument(
        "--schedulers",
        nargs="+",
        default=["minimal", "fifo", "easy", "conservative:8"],
    )
    parser.add_argument("--shape", choices=["slots", "tasks"], default="slots")
    parser.add_argument("--nodes", type=positive, default=64)
    parser.add_argument("--cores", type=positive, default=16)
    parser.add_argument("--load", type=above_zero, default=1.93)
    parser.add_argument("--tree", type=_checkout, action="append", default=[])
    parser.add_argument("--parallel", type=positive, default=2)
    parser.add_argument("--valgrind", default="valgrind")
    args = parser.parse_args()
    if args.jobs < 2:
        parser.error("--jobs: at least 2 (one job is the start-up's run)")
    check_schedulers(parser, args.schedulers)
    raise SystemExit(guarded("", lambda: report(args), prog="instructions"))


if __name__ == "__main__":
    main()
