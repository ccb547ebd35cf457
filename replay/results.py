"""Replay results as files and tables.

A replay's JSON result (:func:`document`) holds what was replayed (trace,
selection, machine, mapping, scheduler and its arguments), the figures,
and every job's record; :func:`read_document` reads one back (for
``flux-schedkit collect``), :func:`write_csv` writes the per-job table,
and :func:`summary` and :func:`table` format figures for the terminal.
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Iterable, Sequence
from importlib import metadata
from pathlib import Path

from replay.metrics import Metrics
from replay.records import CSV_COLUMNS, JobRecord
from replay.runner import ReplayResult
from replay.workload import ReplayInput

#: The ``format`` field of a replay result; the number changes when a
#: reader of the old layout could misread the new one.
FORMAT = "flux-schedkit-replay/1"


class ResultFileError(ValueError):
    """A file that is not a readable replay result; the message names it."""


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "unknown"


def label(scheduler: str, args: Sequence[str]) -> str:
    """A scheduler's name with its module arguments, as tables show it."""
    return " ".join([scheduler, *args])


def document(result: ReplayResult, source: ReplayInput) -> dict:
    """The JSON result of *result*, a replay of *source*."""
    trace = source.trace
    group = source.machine.groups[0]
    workload = source.workload
    return {
        "format": FORMAT,
        "versions": {
            "flux-schedkit": _version("flux-schedkit"),
            "flux-python": _version("flux-python"),
        },
        "scheduler": result.scheduler,
        "module": result.module,
        "args": list(result.args),
        "trace": {
            "path": trace.path,
            "name": Path(trace.path).name,
            "header": dict(trace.header),
            "records": trace.records,
            "unusable": trace.unusable,
            "malformed": trace.malformed,
            "malformed_lines": list(trace.malformed_lines),
            "outside_window": trace.outside_window,
            "passed_over": trace.passed_over,
            "unix_start_time": trace.unix_start_time,
            **source.selection(),
        },
        "machine": {
            "nodes": source.machine.size,
            "cores_per_node": group.cores,
            "gpus_per_node": group.gpus,
            "source": source.machine_source,
        },
        "mapping": {
            "whole_nodes": source.mapping.whole_nodes,
            "exact_estimates": source.mapping.exact_estimates,
            "estimated_from_run": workload.estimated_from_run,
        },
        "never_fit": [
            {"id": job.trace_id, "procs": job.procs, "why": job.why}
            for job in workload.never_fit
        ],
        "metrics": result.metrics.to_dict(),
        "violations": list(result.violations),
        "problems": list(result.problems),
        "scheduler_stats": result.scheduler_stats,
        "jobs": [record.to_dict() for record in result.records],
    }


def _write_atomically(path: str | os.PathLike, write) -> None:
    """Write *path* through a temporary file beside it, so a failed or
    interrupted write leaves no half file."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _dumps(data) -> str:
    """JSON text of a result (or a list of them): indented, but one line
    per job record, so a whole log's result stays small and readable."""
    if isinstance(data, list) and all(isinstance(d, dict) for d in data):
        return "[\n" + ",\n".join(_dumps(d) for d in data) + "\n]"
    if isinstance(data, dict) and len(data) > 1 and isinstance(data.get("jobs"), list):
        head = json.dumps({k: v for k, v in data.items() if k != "jobs"}, indent=1)
        jobs = ",\n".join(json.dumps(j, separators=(",", ":")) for j in data["jobs"])
        return head[: -len("\n}")] + ',\n "jobs": [\n' + jobs + "\n ]\n}"
    return json.dumps(data, indent=1)


def write_json(path: str | os.PathLike, data) -> None:
    """Write *data* (a result, or a list of them) as JSON to *path*."""

    def write(tmp: Path) -> None:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(_dumps(data))
            fh.write("\n")

    _write_atomically(path, write)


def write_csv(path: str | os.PathLike, records: Iterable[JobRecord]) -> None:
    """Write the per-job table (:data:`~replay.records.CSV_COLUMNS`)."""

    def write(tmp: Path) -> None:
        with open(tmp, "w", encoding="utf-8", newline="") as fh:
            out = csv.writer(fh)
            out.writerow(CSV_COLUMNS)
            for record in records:
                out.writerow(record.csv_row())

    _write_atomically(path, write)


def write_table_csv(path: str | os.PathLike, docs: Sequence[dict]) -> None:
    """Write one row of figures per result (``collect --csv``)."""
    names = ["trace", "scheduler", "args", *Metrics.__dataclass_fields__]

    def write(tmp: Path) -> None:
        with open(tmp, "w", encoding="utf-8", newline="") as fh:
            out = csv.writer(fh)
            out.writerow(names)
            for doc in docs:
                m = doc["metrics"]
                out.writerow(
                    [doc["trace"]["name"], doc["scheduler"], " ".join(doc["args"])]
                    + [m[name] for name in Metrics.__dataclass_fields__]
                )

    _write_atomically(path, write)


def read_document(path: str | os.PathLike) -> list[dict]:
    """The replay results in *path*: a replay's ``--json`` file (one
    result) or a compare's (a list of them).

    Raises:
        ResultFileError: the file is not JSON or not replay results.
        OSError: it cannot be read.
    """
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ResultFileError(f"{path}: not a JSON file ({exc})") from None
    docs = data if isinstance(data, list) else [data]
    for doc in docs:
        problem = _problem(doc)
        if problem:
            raise ResultFileError(f"{path}: not a replay result ({problem})")
    return docs


def _problem(doc) -> str | None:
    """What makes *doc* unusable as a replay result, or None."""
    if not isinstance(doc, dict):
        return "expected a JSON object"
    if doc.get("format") != FORMAT:
        return f"format is {doc.get('format')!r}, expected {FORMAT!r}"
    for key in ("scheduler", "args", "trace", "metrics"):
        if key not in doc:
            return f"no {key!r}"
    try:
        Metrics.from_dict(doc["metrics"])
        doc["trace"]["name"]
    except (KeyError, TypeError) as exc:
        return f"incomplete: {exc}"
    return None


# -- the terminal ----------------------------------------------------------------


def _seconds(value: float) -> str:
    return f"{value:,.0f}"


def _days(value: float) -> str:
    return f"{value / 86400:,.1f}"


def summary(doc: dict) -> list[str]:
    """The figures of one result, one per line, for ``flux-schedkit replay``."""
    m = Metrics.from_dict(doc["metrics"])
    rows = [
        (
            "jobs",
            f"{m.jobs:,} ({m.started:,} started, {m.completed:,} completed, "
            f"{m.timeout:,} ended at their limit, {m.denied:,} denied, "
            f"{m.unfinished:,} unfinished)",
        ),
        ("simulated span", f"{_seconds(m.span)} s of submissions ({_days(m.span)} d)"),
        ("makespan", f"{_seconds(m.makespan)} s ({_days(m.makespan)} d)"),
        ("mean wait", f"{_seconds(m.mean_wait)} s"),
        ("median wait", f"{_seconds(m.median_wait)} s"),
        ("p95 wait", f"{_seconds(m.p95_wait)} s"),
        ("max wait", f"{_seconds(m.max_wait)} s"),
        ("mean bounded slowdown", f"{m.mean_bsld:,.1f} (threshold 10 s)"),
        ("utilization", f"{m.utilization:.1%}"),
        (
            "wall time",
            f"{m.wall_seconds:,.1f} s ({m.jobs_per_second:,.0f} jobs per second)",
        ),
        ("referee violations", str(len(doc.get("violations", [])))),
        *_scheduler_rows(doc.get("scheduler_stats")),
    ]
    width = max(len(name) for name, _ in rows)
    return [f"{name:<{width}}  {value}" for name, value in rows]


def _number(stats: dict, *keys: str):
    """The first of *keys* in *stats* that holds a number, else None."""
    for key in keys:
        value = stats.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return value
    return None


def _scheduler_rows(stats: dict | None) -> list[tuple[str, str]]:
    """What the scheduler's own statistics say, for :func:`summary`: its
    passes and their wall times, and (the reference schedulers) the jobs it
    backfilled and its reservation moves; nothing for what it reports not."""
    if not stats:
        return []
    rows = []
    passes = _number(stats, "passes_completed", "sched_passes")
    if passes is not None:
        text = f"{passes:,}"
        mean, most = _number(stats, "mean_pass_time"), _number(stats, "max_pass_time")
        if mean is not None and most is not None:
            text += f" (mean {mean * 1e3:,.2f} ms, max {most * 1e3:,.1f} ms)"
        rows.append(("scheduler passes", text))
    for key, name in (
        ("jobs_backfilled", "jobs backfilled"),
        ("reservation_moves", "reservation moves"),
    ):
        value = _number(stats, key)
        if value is not None:
            rows.append((name, f"{value:,}"))
    return rows


#: Columns of :func:`table`: heading, width, and how to format a result.
_COLUMNS = (
    ("jobs", 7, lambda m: f"{m.jobs:,}"),
    ("span d", 7, lambda m: _days(m.span)),
    ("mean wait", 10, lambda m: _seconds(m.mean_wait)),
    ("med wait", 9, lambda m: _seconds(m.median_wait)),
    ("p95 wait", 10, lambda m: _seconds(m.p95_wait)),
    ("BSLD", 8, lambda m: f"{m.mean_bsld:,.1f}"),
    ("util", 6, lambda m: f"{m.utilization:.1%}"),
    ("makespan d", 10, lambda m: _days(m.makespan)),
    ("wall s", 7, lambda m: f"{m.wall_seconds:,.1f}"),
    ("jobs/s", 7, lambda m: f"{m.jobs_per_second:,.0f}"),
)


def table(docs: Sequence[dict], with_trace: bool = False) -> list[str]:
    """One row of figures per result (waits in seconds, spans in days),
    for ``compare`` and ``collect``; *with_trace* adds the trace's name."""
    names = [label(doc["scheduler"], doc["args"]) for doc in docs]
    first = [("scheduler", max([9, *map(len, names)]))]
    traces = [doc["trace"]["name"] for doc in docs]
    if with_trace:
        first.insert(0, ("trace", max([5, *map(len, traces)])))
    head = [f"{h:<{w}}" for h, w in first] + [f"{h:>{w}}" for h, w, _ in _COLUMNS]
    lines = ["  ".join(head) + "  viol"]
    for doc, name, trace in zip(docs, names, traces, strict=True):
        m = Metrics.from_dict(doc["metrics"])
        cells = [f"{name:<{first[-1][1]}}"]
        if with_trace:
            cells.insert(0, f"{trace:<{first[0][1]}}")
        cells += [f"{fmt(m):>{w}}" for _, w, fmt in _COLUMNS]
        lines.append("  ".join(cells) + f"  {len(doc.get('violations', [])):>4}")
    return lines


__all__ = [
    "FORMAT",
    "ResultFileError",
    "document",
    "label",
    "read_document",
    "summary",
    "table",
    "write_csv",
    "write_json",
    "write_table_csv",
]
