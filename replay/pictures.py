"""Pictures of a replay, drawn with matplotlib from its per-job records.

- A Gantt chart (:func:`draw_gantt`): one row per node, each job a box
  from its start to its end on the cores it held (a node's row is split
  by cores, so jobs sharing a node sit one above the other).
- Utilization and queue length over time (:func:`draw_usage`), averaged
  over equal bins of time, for one replay or several side by side.

The data behind each picture comes from functions of its own
(:func:`gantt_boxes`, :func:`usage_steps`, :func:`usage_series`), which
the tests check; the drawing functions only lay that data out.  Drawing
uses matplotlib's Agg backend and never needs a display.
"""

from __future__ import annotations

import os
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise

from mock_broker.flux_substitute.idset import IDset
from replay.records import JobRecord
from replay.swf import Window

#: Bins of time in :func:`usage_series` (a point every 1/200 of the span).
USAGE_BINS = 200
#: Jobs in a Gantt window up to which each box carries its trace job id.
LABELLED_JOBS = 60


@dataclass(frozen=True)
class Box:
    """A rectangle of a Gantt chart: job *job* on rows ``y0 .. y0+height``
    (row *r* is node *r*, split by cores) from *x0* to *x1* (trace s)."""

    job: int
    x0: float
    x1: float
    y0: float
    height: float


def _runs(ids: Sequence[int]) -> list[tuple[int, int]]:
    """Maximal runs of consecutive integers, as (first, last) pairs."""
    out: list[tuple[int, int]] = []
    for value in sorted(ids):
        if out and value == out[-1][1] + 1:
            out[-1] = (out[-1][0], value)
        else:
            out.append((value, value))
    return out


def gantt_boxes(
    records: Sequence[JobRecord], cores_per_node: int, window: Window | None = None
) -> list[Box]:
    """The boxes of a Gantt chart of *records*, clipped to *window*.

    A job that never ran, or ran for no time inside the window, has no
    box.  Consecutive nodes a job holds whole make one box.
    """
    out: list[Box] = []
    lo_w = None if window is None else window.start
    hi_w = None if window is None else window.end
    for record in records:
        if record.start is None or record.end is None:
            continue
        x0 = record.start if lo_w is None else max(record.start, lo_w)
        x1 = record.end if hi_w is None else min(record.end, hi_w)
        if x1 <= x0:
            continue
        whole: list[int] = []
        for ranks, cores in record.allocation:
            core_runs = _runs(list(IDset(cores)))
            if core_runs == [(0, cores_per_node - 1)]:
                whole.extend(IDset(ranks))
                continue
            for rank in IDset(ranks):
                for first, last in core_runs:
                    out.append(
                        Box(
                            record.id,
                            x0,
                            x1,
                            rank + first / cores_per_node,
                            (last - first + 1) / cores_per_node,
                        )
                    )
        for first, last in _runs(whole):
            out.append(Box(record.id, x0, x1, float(first), float(last - first + 1)))
    return out


@dataclass(frozen=True)
class Steps:
    """Step functions of time: from ``times[i]`` to ``times[i + 1]``,
    ``busy[i]`` cores are held and ``queued[i]`` jobs wait."""

    times: list[float]
    busy: list[int]
    queued: list[int]


def usage_steps(records: Sequence[JobRecord]) -> Steps:
    """Cores held and jobs waiting over time, exactly, from *records*.

    At one instant every change applies before the value is taken (a job
    that ends as another starts does not add up).  A job still pending or
    running at the end is counted until the last change.
    """
    changes: dict[float, list[int]] = {}

    def change(when: float, busy: int, queued: int) -> None:
        entry = changes.setdefault(when, [0, 0])
        entry[0] += busy
        entry[1] += queued

    for record in records:
        change(record.submit, 0, 1)
        if record.start is not None:
            change(record.start, record.cores, -1)
            if record.end is not None:
                change(record.end, -record.cores, 0)
    times, busy, queued = [], [], []
    held = waiting = 0
    for when in sorted(changes):
        held += changes[when][0]
        waiting += changes[when][1]
        times.append(when)
        busy.append(held)
        queued.append(waiting)
    return Steps(times, busy, queued)


def time_average(
    times: Sequence[float], values: Sequence[float], edges: Sequence[float]
) -> list[float]:
    """The average of a step function over each bin ``edges[k] ..
    edges[k + 1]``; the function is ``values[i]`` from ``times[i]`` until
    ``times[i + 1]`` (the last value lasts on), 0 before ``times[0]``."""
    # cumulative[i]: the integral from times[0] to times[i].
    cumulative = [0.0]
    for i in range(1, len(times)):
        cumulative.append(cumulative[-1] + values[i - 1] * (times[i] - times[i - 1]))

    def integral(t: float) -> float:
        i = bisect_right(times, t) - 1
        return 0.0 if i < 0 else cumulative[i] + values[i] * (t - times[i])

    return [
        (integral(hi) - integral(lo)) / (hi - lo) if hi > lo else 0.0
        for lo, hi in pairwise(edges)
    ]


@dataclass(frozen=True)
class UsageSeries:
    """Utilization (0-1) and mean queue length per bin of time; bin *k*
    runs from ``edges[k]`` to ``edges[k + 1]`` (trace seconds)."""

    edges: list[float]
    utilization: list[float]
    queue: list[float]


def usage_series(
    records: Sequence[JobRecord],
    total_cores: int,
    bins: int = USAGE_BINS,
    window: Window | None = None,
) -> UsageSeries:
    """Binned utilization and queue length of *records* over *window*
    (default: first submission to last change)."""
    steps = usage_steps(records)
    if not steps.times:
        return UsageSeries([], [], [])
    lo = steps.times[0] if window is None or window.start is None else window.start
    hi = steps.times[-1] if window is None or window.end is None else window.end
    if hi <= lo:
        hi = lo + 1.0
    edges = [lo + (hi - lo) * k / bins for k in range(bins + 1)]
    busy = time_average(steps.times, steps.busy, edges)
    return UsageSeries(
        edges,
        [b / total_cores for b in busy],
        time_average(steps.times, steps.queued, edges),
    )


# -- drawing --------------------------------------------------------------------


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _time_unit(extent: float) -> tuple[float, str]:
    """Seconds per axis unit, and its name, for a stretch of *extent* s."""
    if extent <= 3 * 3600:
        return 60.0, "min"
    if extent <= 3 * 86400:
        return 3600.0, "h"
    return 86400.0, "d"


def _save(fig, plt, path: str | os.PathLike) -> None:
    try:
        fig.savefig(path, format="png", dpi=100)
    finally:
        plt.close(fig)


def draw_gantt(
    records: Sequence[JobRecord],
    nodes: int,
    cores_per_node: int,
    path: str | os.PathLike,
    window: Window | None = None,
    title: str = "",
) -> int:
    """Draw the Gantt chart of *records* to the PNG *path*; return the
    number of boxes drawn."""
    from matplotlib.collections import PatchCollection
    from matplotlib.patches import Rectangle

    plt = _pyplot()
    boxes = gantt_boxes(records, cores_per_node, window)
    lo = min((b.x0 for b in boxes), default=0.0)
    hi = max((b.x1 for b in boxes), default=1.0)
    if window is not None:
        lo = lo if window.start is None else window.start
        hi = hi if window.end is None else window.end
    scale, unit = _time_unit(hi - lo)
    cmap = plt.get_cmap("tab20")
    fig, ax = plt.subplots(figsize=(10, max(3.0, min(8.0, 1.5 + nodes * 0.1))))
    patches = [
        Rectangle(((b.x0 - lo) / scale, b.y0), (b.x1 - b.x0) / scale, b.height)
        for b in boxes
    ]
    colours = [cmap(b.job % 20) for b in boxes]
    ax.add_collection(
        PatchCollection(patches, facecolors=colours, edgecolors="black", linewidths=0.3)
    )
    jobs = {b.job for b in boxes}
    if len(jobs) <= LABELLED_JOBS:
        biggest: dict[int, Box] = {}
        for b in boxes:
            if b.job not in biggest or b.height > biggest[b.job].height:
                biggest[b.job] = b
        for b in biggest.values():
            ax.text(
                (b.x0 + b.x1) / 2 / scale - lo / scale,
                b.y0 + b.height / 2,
                str(b.job),
                ha="center",
                va="center",
                fontsize=7,
                clip_on=True,
            )
    ax.set_xlim(0, (hi - lo) / scale)
    ax.set_ylim(nodes, 0)
    ax.set_xlabel(f"time from {lo:,.0f} s of the trace ({unit})")
    ax.set_ylabel("node (rank)")
    ax.set_title(title or f"{len(jobs)} jobs on {nodes} nodes")
    fig.tight_layout()
    _save(fig, plt, path)
    return len(boxes)


def draw_usage(
    series: Mapping[str, UsageSeries], path: str | os.PathLike, title: str = ""
) -> None:
    """Draw utilization and queue length over time, one line per entry of
    *series* (a label: a scheduler), to the PNG *path*."""
    plt = _pyplot()
    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(10, 6))
    edges = [s.edges for s in series.values() if s.edges]
    lo = min((e[0] for e in edges), default=0.0)
    hi = max((e[-1] for e in edges), default=1.0)
    scale, unit = _time_unit(hi - lo)
    for name, s in series.items():
        if not s.edges:
            continue
        middles = [((a + b) / 2 - lo) / scale for a, b in pairwise(s.edges)]
        top.plot(middles, [100 * u for u in s.utilization], label=name, lw=1)
        bottom.plot(middles, s.queue, lw=1)
    top.set_ylabel("utilization (%)")
    top.set_ylim(0, 105)
    bottom.set_ylabel("jobs waiting (mean)")
    bottom.set_xlabel(f"time from {lo:,.0f} s of the trace ({unit})")
    if len(series) > 1:
        fig.legend(loc="upper right", ncol=len(series), fontsize=8, frameon=False)
    top.set_title(title, loc="left")
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    _save(fig, plt, path)


__all__ = [
    "Box",
    "Steps",
    "UsageSeries",
    "draw_gantt",
    "draw_usage",
    "gantt_boxes",
    "time_average",
    "usage_series",
    "usage_steps",
]
