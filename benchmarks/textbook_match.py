"""Replay a whole trace through the reference schedulers and compare every
job's start with the textbook model of its policy.

Each scheduler replays the trace on the mock broker (identical single-core
nodes, as many as the trace's ``MaxProcs``, user estimates as time limits)
and every job's start is compared with :func:`conformance.policy.textbook.
simulate` on the same workload.  Per scheduler it prints the jobs compared,
how many start exactly when the model says, the first divergence if any,
and the wall time of the replay and of the model.

With ``--cores-per-node C`` the processors are ``--nodes / C`` nodes of C
cores, as on a trace's real machine (CEA-Curie: ``--nodes 93312
--cores-per-node 16``); each job asks for one-core slots anywhere (the
replay's default mapping), which take free cores wherever they are, so
the model's processor count still decides every start.  With
``--whole-nodes`` each job asks for the whole nodes its processors fill
(exclusively), and the model counts nodes.

    python benchmarks/textbook_match.py [--trace PATH] [--limit N] [--skip N]
        [--nodes N] [--cores-per-node C] [--whole-nodes]
        [--schedulers fifo easy conservative conservative:4]

``conservative:N`` is the conservative module with ``reservation-depth=N``,
compared with backfilling of reservation depth N.

Exit status 0 when done (divergences are reported, not failures), 1 if
the output closed early, 2 for a wrong argument (an unknown scheduler
name, a count below 1, ``--nodes`` smaller than the trace's largest job or
not a multiple of ``--cores-per-node``) or a trace that cannot be read
(one line on stderr), 130 on Ctrl-C.
"""

from __future__ import annotations

import argparse
import gc
import time
from pathlib import Path
from unittest import mock

from conformance.policy import textbook
from conformance.referee import Referee
from flux_schedkit.console import EXIT_OK, EXIT_USAGE, guarded, say
from flux_schedkit.reference import reference_spec
from flux_schedkit.trace_options import InputError, not_negative, positive, reading
from mock_broker.machine import Machine
from replay.runner import replay
from replay.swf import read_swf
from replay.workload import JobMapping, map_jobs

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_TRACE = ROOT.parent / "shared" / "traces" / "KTH-SP2-1996-2.1-cln.swf.gz"


def module_of(name: str) -> tuple[str, list[str], str, int | None]:
    """``(module path, module args, model policy, depth)`` for a name."""
    policy, _, depth = name.partition(":")
    path = str(ROOT / "schedulers" / policy / f"schedkit-{policy}.py")
    if depth:
        return path, [f"reservation-depth={depth}"], "hybrid", int(depth)
    return path, [], policy, None


def model_starts(policy: str, total: int, jobs, depth: int | None) -> dict:
    """The textbook model's start of each job (``hybrid``: depth *depth*)."""
    if policy != "hybrid":
        return textbook.simulate(policy, total, jobs)

    def starts(_policy, now, total, running, queue, held=None):
        return textbook.backfill_starts(now, total, running, queue, depth=depth)

    with mock.patch.object(textbook, "starts", starts):
        return textbook.simulate("backfill", total, jobs)


def compare(
    name: str, trace, nodes: int, cores_per_node: int = 1, whole_nodes: bool = False
) -> dict:
    """Replay *trace* through scheduler *name* on *nodes* processors
    (*cores_per_node* to a node; with *whole_nodes* each job asks for the
    whole nodes its processors fill); compare with the model, in
    processors (in nodes with *whole_nodes*)."""
    path, args, policy, depth = module_of(name)
    gc.collect()  # its replay's time without the garbage of the one before
    machine = Machine.uniform(nodes // cores_per_node, cores_per_node)
    workload = map_jobs(trace.jobs, machine, JobMapping(whole_nodes=whole_nodes))
    result, broker = replay(
        path,
        workload,
        machine,
        args=["queue-depth=unlimited", *args],
        label=name,
        watch=Referee.attach,
    )
    records = [broker.jobs.job(jobid) for jobid in sorted(broker.jobs.jobs)]
    first = min(job.t_submit for job in records)
    replayed = {
        k: job.t_run - first for k, job in enumerate(records) if job.t_run is not None
    }
    t0 = workload.jobs[0].submit
    jobs = [
        textbook.WorkloadJob(
            k, j.submit - t0, j.nodes if whole_nodes else j.procs, j.limit, j.run
        )
        for k, j in enumerate(workload.jobs)
    ]
    total = machine.size if whole_nodes else nodes
    m0 = time.perf_counter()
    model = model_starts(policy, total, jobs, depth)
    model_wall = time.perf_counter() - m0
    keys = sorted(set(replayed) | set(model))
    differ = [k for k in keys if replayed.get(k) != model.get(k)]
    divergence = None
    if differ:
        k = min(
            differ, key=lambda k: (min(replayed.get(k, 1e300), model.get(k, 1e300)), k)
        )
        job = workload.jobs[k]
        divergence = (
            f"trace job {job.trace_id} ({job.procs} procs, "
            f"limit {job.limit:.0f} s): replay starts at "
            f"{_fmt(replayed.get(k))}, the model at {_fmt(model.get(k))}"
        )
    return {
        "name": name,
        "compared": len(keys),
        "matching": len(keys) - len(differ),
        "divergence": divergence,
        "replay_wall": result.wall_seconds,
        "model_wall": model_wall,
        "violations": result.violations,
    }


def _fmt(value) -> str:
    return "never" if value is None else f"{value:.0f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", default=str(DEFAULT_TRACE))
    parser.add_argument("--limit", type=positive, default=None)
    parser.add_argument("--skip", type=not_negative, default=0)
    parser.add_argument(
        "--schedulers", nargs="+", default=["fifo", "easy", "conservative"]
    )
    parser.add_argument(
        "--nodes",
        type=positive,
        default=None,
        help="processors; default: the trace's MaxProcs; at least its largest job",
    )
    parser.add_argument(
        "--cores-per-node",
        type=positive,
        default=1,
        help="cores to a node (default 1); --nodes must be a multiple",
    )
    parser.add_argument(
        "--whole-nodes",
        action="store_true",
        help="each job asks for the whole nodes its processors fill",
    )
    args = parser.parse_args()
    for name in args.schedulers:
        try:
            reference_spec(name)
        except ValueError as exc:
            parser.error(str(exc))
    raise SystemExit(guarded("", lambda: report(args), prog="textbook_match"))


def report(args) -> int:
    """Compare each scheduler and print its row; the exit status."""
    try:
        with reading(args.trace):
            trace = read_swf(args.trace, limit=args.limit, skip=args.skip)
    except InputError as exc:
        say("", str(exc), prog="textbook_match")
        return EXIT_USAGE
    if not trace.jobs:
        say("", f"{args.trace}: no job to replay", prog="textbook_match")
        return EXIT_USAGE
    largest = max(j.procs for j in trace.jobs)
    nodes = args.nodes or trace.max_procs or largest
    if nodes < largest:
        # A job the machine cannot hold would never start in either, and
        # the replay and the model would no longer compare job for job.
        say(
            "",
            f"--nodes {nodes}: the trace has a job of {largest} processors",
            prog="textbook_match",
        )
        return EXIT_USAGE
    per_node = args.cores_per_node
    if nodes % per_node:
        say(
            "",
            f"--nodes {nodes} is not a multiple of --cores-per-node {per_node}",
            prog="textbook_match",
        )
        return EXIT_USAGE
    print(
        f"{Path(args.trace).name}: {len(trace.jobs)} jobs on "
        f"{nodes // per_node} x {per_node} core{'s' if per_node > 1 else ''}"
        + (", whole nodes" if args.whole_nodes else "")
    )
    print(
        f"{'scheduler':<16} {'compared':>9} {'matching':>9} "
        f"{'replay s':>9} {'model s':>8}  first divergence"
    )
    for name in args.schedulers:
        row = compare(name, trace, nodes, per_node, args.whole_nodes)
        print(
            f"{row['name']:<16} {row['compared']:>9} {row['matching']:>9} "
            f"{row['replay_wall']:>9.1f} {row['model_wall']:>8.1f}  "
            f"{row['divergence'] or 'none'}"
            + (f"  referee: {row['violations']}" if row["violations"] else ""),
            flush=True,
        )
    return EXIT_OK


if __name__ == "__main__":
    main()
