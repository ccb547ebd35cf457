"""Paired flux-schedbench rounds: reference schedulers against flux-core's own.

Each pair (schedkit-fifo / sched-fifo, schedkit-easy / sched-backfill,
schedkit-conservative / sched-backfill) is run at each queue depth, in
rounds; a round starts one single-broker instance per scheduler (the order
alternates from round to round), with flux-core's fake resources and the
scheduler selected by config (``modules.alternatives.sched``, as
``flux schedbench run --scheduler`` does), and runs flux-schedbench's
``throughput`` benchmark inside it.  The reference schedulers load through
the files ``flux-schedkit site-config`` writes, in a temporary folder named
by ``FLUX_MODPROBE_PATH_APPEND``.

Throughput on a small machine is set by the broker, so the figure that
tells schedulers apart is the scheduler's own CPU time: a Python module
runs as its own process (``flux module-python-exec``), and its user+system
time is read from ``/proc/PID/stat`` just before and just after the
benchmark (module start-up is not counted).  The broker's CPU time is shown
beside it.  Printed per scheduler: mean, p95 and max over the rounds; per
pair: the ratio of means (ours / upstream) and the worst round's ratio.

With ``--floor``, each round also runs flux-python's smallest scheduler
(the guide's minimal example, ``tests/mock_broker/schedulers/seed_minimal.py``,
loaded as ``python-minimal``): it starts the head of the queue while it
fits and does nothing else, so its CPU time is what flux-python's
framework itself costs for the same jobs, the floor under any scheduler
written on it that takes the framework's own message handling.

Needs flux-core 0.88's ``flux`` on PATH with flux-schedbench installed as
its subcommand (``flux schedbench``), and flux-schedkit importable by the
Python running this script.

    python benchmarks/real_flux_schedbench.py [--jobs 2000] [--nodes 4]
        [--cores 64] [--rounds 8] [--depth 8 unlimited]
        [--pair fifo easy conservative] [--floor] [--json FILE]

Exit status: 0 done, 1 a run failed, 2 no usable flux, 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from flux_schedkit.trace_options import above_zero, positive

#: Reference scheduler -> the upstream module it is compared with.
PAIRS = {
    "fifo": "sched-fifo",
    "easy": "sched-backfill",
    "conservative": "sched-backfill",
}
CLK_TCK = os.sysconf("SC_CLK_TCK")

#: flux-python's minimal scheduler, run with ``--floor``.
FLOOR = "python-minimal"
FLOOR_FILE = (
    Path(__file__).resolve().parents[1]
    / "tests"
    / "mock_broker"
    / "schedulers"
    / "seed_minimal.py"
)


# -- inside an instance ------------------------------------------------------------


def _cpu_seconds(pid: int) -> float:
    """utime + stime of *pid*, in seconds (fields 14 and 15 of stat)."""
    with open(f"/proc/{pid}/stat") as fp:
        fields = fp.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def _module_pid(name: str) -> int:
    """The process running broker module file ``NAME.py``."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as fp:
                argv = fp.read().split(b"\0")
        except OSError:
            continue
        if any(b"flux-module-python-exec" in a for a in argv) and any(
            a.endswith(f"/{name}.py".encode()) for a in argv
        ):
            return int(entry)
    raise SystemExit(f"no module process runs {name}.py")


def inner(name: str, njobs: int) -> None:
    """Run in the instance: the benchmark between two CPU readings."""
    flux = shutil.which("flux") or "flux"
    broker = int(subprocess.check_output([flux, "getattr", "broker.pid"], text=True))
    module = _module_pid(name)
    cpu0, broker0 = _cpu_seconds(module), _cpu_seconds(broker)
    out = subprocess.run(
        [flux, "schedbench", "run", "throughput", "-n", str(njobs), "-q", "--no-save"],
        env={**os.environ, "FLUX_SCHEDBENCH_ISOLATED": "1"},
        capture_output=True,
        text=True,
    )
    cpu1, broker1 = _cpu_seconds(module), _cpu_seconds(broker)
    if out.returncode != 0:
        raise SystemExit(f"flux schedbench failed: {out.stderr.strip()[-500:]}")
    result = None
    for line in out.stdout.splitlines():
        if line.startswith("{") and '"throughput"' in line:
            result = json.loads(line)
    if result is None:
        raise SystemExit(
            f"no throughput in flux schedbench output: {out.stdout[-500:]}"
        )
    figures = {
        "throughput": result["throughput"],
        "sched_cpu": cpu1 - cpu0,
        "broker_cpu": broker1 - broker0,
    }
    print("RESULT " + json.dumps(figures))


# -- the driver ------------------------------------------------------------------------


def _run(flux: str, site: Path, name: str, depth: str, args) -> dict:
    conf = [
        f"--conf=fake-resources.nnodes={args.nodes}",
        f"--conf=fake-resources.cores-per-node={args.cores}",
        "--conf=fake-resources.gpus-per-node=0",
        f"--conf=modules.alternatives.sched={name}",
        f'--conf=modules.{name}.args=["queue-depth={depth}"]',
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLUX_")}
    env.pop("PYTHONPATH", None)
    env["FLUX_MODPROBE_PATH_APPEND"] = str(site)
    inner_cmd = [sys.executable, __file__, "--inner", name, str(args.jobs)]
    t0 = time.perf_counter()
    proc = subprocess.run(
        [flux, "start", "-s1", *conf, "--", *inner_cmd],
        env=env,
        capture_output=True,
        text=True,
        timeout=args.timeout,
    )
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            figures = json.loads(line[7:])
            figures["wall"] = time.perf_counter() - t0
            return figures
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
    raise RuntimeError(f"{name} queue-depth={depth}: " + " | ".join(tail))


def _summary(values: list[float]) -> tuple[float, float, float]:
    if len(values) > 1:
        p95 = statistics.quantiles(values, n=20, method="inclusive")[18]
    else:
        p95 = values[0]
    return statistics.fmean(values), p95, max(values)


def _report(results: dict, args) -> None:
    head = (
        f"{'pair':<14} {'depth':>9} {'scheduler':<22} "
        f"{'jobs/s mean/p95/max':>22} {'sched CPU s mean/p95/max':>27} "
        f"{'broker CPU s':>13}"
    )
    print(
        f"\n{args.jobs} jobs on {args.nodes} x {args.cores} fake cores, "
        f"{args.rounds} rounds"
    )
    print(head)
    ratios = []
    for (pair, depth), per in results.items():
        for name, runs in per.items():
            tput = _summary([r["throughput"] for r in runs])
            cpu = _summary([r["sched_cpu"] for r in runs])
            broker = statistics.fmean(r["broker_cpu"] for r in runs)
            print(
                f"{pair:<14} {depth:>9} {name:<22} "
                f"{tput[0]:>8.0f}/{tput[1]:>6.0f}/{tput[2]:>6.0f} "
                f"{cpu[0]:>9.3f}/{cpu[1]:>8.3f}/{cpu[2]:>8.3f} {broker:>13.3f}"
            )
        upstream = per[PAIRS[pair]]
        ratios.append((pair, depth, *_ratios(per[f"schedkit-{pair}"], upstream)))
        if FLOOR in per:
            ratios.append((f"{pair} (minimal)", depth, *_ratios(per[FLOOR], upstream)))
    print(
        f"\n{'ours / upstream':<20} {'depth':>9} {'sched CPU':>10} "
        f"{'worst round':>12} {'jobs/s':>8} {'worst round':>12}"
    )
    for label, depth, cpu, cpu_worst, tput, tput_worst in ratios:
        print(
            f"{label:<20} {depth:>9} {cpu:>9.2f}x {cpu_worst:>11.2f}x "
            f"{tput:>7.2f}x {tput_worst:>11.2f}x"
        )
    if any(FLOOR in per for per in results.values()):
        print(
            "(minimal): flux-python's minimal scheduler in the same rounds, "
            "against the same upstream module"
        )


def _ratios(
    ours: list[dict], upstream: list[dict]
) -> tuple[float, float, float, float]:
    """Mean CPU ratio, the worst round's, mean throughput ratio, the worst
    round's (rounds paired in order)."""
    cpu_round = [
        o["sched_cpu"] / u["sched_cpu"] for o, u in zip(ours, upstream, strict=True)
    ]
    tput_round = [
        o["throughput"] / u["throughput"] for o, u in zip(ours, upstream, strict=True)
    ]
    return (
        statistics.fmean(o["sched_cpu"] for o in ours)
        / statistics.fmean(u["sched_cpu"] for u in upstream),
        max(cpu_round),
        statistics.fmean(o["throughput"] for o in ours)
        / statistics.fmean(u["throughput"] for u in upstream),
        min(tput_round),
    )


def queue_depth(text: str) -> str:
    """An argparse type: ``unlimited`` or a count of at least 1, as given."""
    if text == "unlimited" or (text.isascii() and text.isdigit() and int(text) >= 1):
        return text
    raise argparse.ArgumentTypeError(
        f"{text!r} is neither a count >= 1 nor 'unlimited'"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--inner", nargs=2, metavar=("NAME", "NJOBS"), help=argparse.SUPPRESS
    )
    parser.add_argument("--jobs", type=positive, default=2000)
    parser.add_argument("--nodes", type=positive, default=4)
    parser.add_argument("--cores", type=positive, default=64)
    parser.add_argument("--rounds", type=positive, default=8)
    parser.add_argument(
        "--depth", type=queue_depth, nargs="+", default=["8", "unlimited"]
    )
    parser.add_argument("--pair", nargs="+", choices=list(PAIRS), default=list(PAIRS))
    parser.add_argument(
        "--timeout", type=above_zero, default=1800, help="seconds a run"
    )
    parser.add_argument(
        "--floor",
        action="store_true",
        help="also run flux-python's minimal scheduler in every round",
    )
    parser.add_argument("--json", help="also write every run's figures here")
    args = parser.parse_args(argv)
    if args.inner:
        inner(args.inner[0], int(args.inner[1]))
        return 0

    flux = shutil.which("flux")
    if flux is None:
        print("real_flux_schedbench: no flux on PATH", file=sys.stderr)
        return 2
    check = subprocess.run([flux, "schedbench", "--help"], capture_output=True)
    if check.returncode != 0:
        print("real_flux_schedbench: flux schedbench is not installed", file=sys.stderr)
        return 2
    from flux_schedkit import site_files

    results: dict = {}
    try:
        with tempfile.TemporaryDirectory(prefix="schedkit-site-") as tmp:
            site = Path(tmp)
            own = {FLOOR: FLOOR_FILE} if args.floor else None
            site_files.install(site_files.site_files(site, args.pair, modules=own))
            for depth in args.depth:
                for pair in args.pair:
                    names = [f"schedkit-{pair}", PAIRS[pair]]
                    if args.floor:
                        names.append(FLOOR)
                    per = results.setdefault((pair, depth), {n: [] for n in names})
                    for round_ in range(args.rounds):
                        for name in names if round_ % 2 == 0 else names[::-1]:
                            figures = _run(flux, site, name, depth, args)
                            per[name].append(figures)
                            print(
                                f"round {round_ + 1} {name} queue-depth={depth}: "
                                f"{figures['throughput']:.0f} jobs/s, "
                                f"scheduler CPU {figures['sched_cpu']:.2f} s",
                                file=sys.stderr,
                            )
    except KeyboardInterrupt:
        print("real_flux_schedbench: interrupted", file=sys.stderr)
        return 130
    except (RuntimeError, subprocess.TimeoutExpired) as exc:
        print(f"real_flux_schedbench: {exc}", file=sys.stderr)
        return 1
    _report(results, args)
    if args.json:
        rows = [
            {"pair": p, "depth": d, "scheduler": n, **r}
            for (p, d), per in results.items()
            for n, runs in per.items()
            for r in runs
        ]
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
