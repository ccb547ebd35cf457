"""The Gantt pictures of docs/policies.rst, made by the replay tool at build time.

Each small workload in ``docs/workloads/`` is replayed through each
reference scheduler on the mock broker (virtual time, fixed seed), exactly
as ``flux-schedkit replay WORKLOAD.swf --scheduler POLICY [--args ARGS]
--gantt OUT.png`` does, and drawn with :func:`replay.pictures.draw_gantt`
into ``docs/_generated/policies/WORKLOAD-LABEL.png``.  The same replay always
gives the same schedule, so the pictures cannot drift from the schedulers.
"""

from __future__ import annotations

from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent
WORKLOADS = DOCS / "workloads"
#: The reference schedulers, as the first two workloads are drawn.
POLICIES = ("fifo", "easy", "conservative")
#: Workload -> the runs drawn: (label in the file name, scheduler, arguments).
PICTURES: dict[str, list[tuple[str, str, list[str]]]] = {
    "easy-second-rule": [(p, p, []) for p in POLICIES],
    "conservative-compression": [(p, p, []) for p in POLICIES],
    "hybrid-depth": [
        (f"depth-{depth}", "conservative", [f"reservation-depth={depth}"])
        for depth in ("1", "2", "unlimited")
    ],
}


def replay_workload(workload: str, policy: str, args: list[str] | None = None):
    """Replay ``docs/workloads/WORKLOAD.swf`` through reference scheduler
    *policy*; return ``(result, broker, machine)`` (the caller closes the
    broker)."""
    from flux_schedkit.reference import reference_path
    from replay.runner import replay
    from replay.workload import prepare

    source = prepare(str(WORKLOADS / f"{workload}.swf"))
    result, broker = replay(
        str(reference_path(policy)),
        source.workload,
        source.machine,
        list(args or []),
        label=policy,
        unix_start_time=source.trace.unix_start_time,
    )
    return result, broker, source.machine


def draw(outdir: Path) -> list[Path]:
    """Draw every picture into *outdir*; return the files written.

    The pictures of one workload share their time axis (from 0 to the
    last end under any policy), so they can be compared side by side.
    """
    from replay.pictures import draw_gantt
    from replay.swf import Window

    outdir.mkdir(parents=True, exist_ok=True)
    written = []
    for workload, runs in PICTURES.items():
        results = {}
        for label, policy, args in runs:
            result, broker, machine = replay_workload(workload, policy, args)
            broker.close()
            if result.problems:
                raise RuntimeError(f"{workload} under {label}: {result.problems}")
            results[label] = (result, " ".join([policy, *args]))
        end = max(r.end for res, _ in results.values() for r in res.records)
        for label, (result, how) in results.items():
            path = outdir / f"{workload}-{label}.png"
            draw_gantt(
                result.records,
                machine.size,
                machine.groups[0].cores,
                path,
                window=Window(0.0, end),
                title=f"{workload}.swf under {how}",
            )
            written.append(path)
    return written


def _on_builder_inited(app) -> None:
    draw(Path(app.srcdir) / "_generated" / "policies")


def setup(app) -> dict:
    """Draw the pictures when a build starts."""
    app.connect("builder-inited", _on_builder_inited)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
