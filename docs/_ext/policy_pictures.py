"""The Gantt pictures of docs/policies.rst, made by the replay tool at build time.

Each small workload in ``docs/workloads/`` is replayed through each
reference scheduler on the mock broker (virtual time, fixed seed), exactly
as ``flux-schedkit replay WORKLOAD.swf --scheduler POLICY --gantt OUT.png``
does, and drawn with :func:`replay.pictures.draw_gantt` into
``docs/_generated/policies/WORKLOAD-POLICY.png``.  The same replay always
gives the same schedule, so the pictures cannot drift from the schedulers.
"""

from __future__ import annotations

from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent
WORKLOADS = DOCS / "workloads"
#: Workloads drawn, each under every policy of POLICIES.
PICTURES = ("easy-second-rule", "conservative-compression")
POLICIES = ("fifo", "easy", "conservative")


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
    for workload in PICTURES:
        results = {}
        for policy in POLICIES:
            result, broker, machine = replay_workload(workload, policy)
            broker.close()
            if result.problems:
                raise RuntimeError(f"{workload} under {policy}: {result.problems}")
            results[policy] = result
        end = max(r.end for res in results.values() for r in res.records)
        for policy, result in results.items():
            path = outdir / f"{workload}-{policy}.png"
            draw_gantt(
                result.records,
                machine.size,
                machine.groups[0].cores,
                path,
                window=Window(0.0, end),
                title=f"{workload}.swf under {policy}",
            )
            written.append(path)
    return written


def _on_builder_inited(app) -> None:
    draw(Path(app.srcdir) / "_generated" / "policies")


def setup(app) -> dict:
    """Draw the pictures when a build starts."""
    app.connect("builder-inited", _on_builder_inited)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
