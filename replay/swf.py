"""Read workload traces in the Standard Workload Format (SWF).

SWF is the format of the Parallel Workloads Archive (Feitelson, Tsafrir
and Krakov, "Experience with using the Parallel Workloads Archive", JPDC
74(10), 2014): one job a line, 18 whitespace-separated fields, ``;``
starting header comments such as ``; MaxProcs: 100``.  -1 means unknown.

A replay needs, per job, the submit time (field 2), the run time (4), the
processors requested (8, or allocated, 5, where requested is -1) and the
requested time (9), the user's estimate, used as the job's time limit.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass
from pathlib import Path


class SWFError(ValueError):
    """A trace line that cannot be read; the message names file and line."""


@dataclass(frozen=True)
class SWFJob:
    """One job of a trace (times in seconds, relative to the log's start)."""

    job_id: int
    submit: float
    wait: float
    run: float
    procs: int
    requested_time: float
    status: int
    user: int


@dataclass
class SWFTrace:
    """A trace: its header fields and its jobs, in file order."""

    path: str
    header: dict[str, str]
    jobs: list[SWFJob]
    skipped: int = 0  # jobs with no usable size or run time

    @property
    def max_procs(self) -> int | None:
        """The ``MaxProcs`` header field (the machine's size), if present."""
        value = self.header.get("MaxProcs")
        return int(value) if value and value.lstrip("-").isdigit() else None


def _open(path: Path):
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8", errors="replace")
    return open(path, encoding="utf-8", errors="replace")


def read_swf(path: str | Path, limit: int | None = None, skip: int = 0) -> SWFTrace:
    """Read *path* (plain or ``.gz``).

    Jobs whose processor count or run time is unknown or not positive
    cannot be replayed and are counted in :attr:`SWFTrace.skipped`.
    *skip* usable jobs are passed over first, then at most *limit* are kept.

    Raises:
        SWFError: a data line does not have 18 numeric fields.
        FileNotFoundError: *path* does not exist.
    """
    path = Path(path)
    header: dict[str, str] = {}
    jobs: list[SWFJob] = []
    skipped = 0
    with _open(path) as fh:
        for lineno, line in enumerate(fh, 1):
            text = line.strip()
            if not text:
                continue
            if text.startswith(";"):
                key, sep, value = text[1:].partition(":")
                if sep and key.strip() and key.strip() not in header:
                    header[key.strip()] = value.strip()
                continue
            fields = text.split()
            if len(fields) < 18:
                raise SWFError(f"{path}:{lineno}: {len(fields)} fields, SWF has 18")
            try:
                values = [float(f) for f in fields[:18]]
            except ValueError as exc:
                raise SWFError(f"{path}:{lineno}: {exc}") from None
            procs = int(values[7]) if values[7] > 0 else int(values[4])
            if procs <= 0 or values[3] < 0:
                skipped += 1
                continue
            if skip:
                skip -= 1
                continue
            jobs.append(
                SWFJob(
                    job_id=int(values[0]),
                    submit=values[1],
                    wait=values[2],
                    run=values[3],
                    procs=procs,
                    requested_time=max(values[8], 0.0),
                    status=int(values[10]),
                    user=int(values[11]),
                )
            )
            if limit is not None and len(jobs) >= limit:
                break
    return SWFTrace(str(path), header, jobs, skipped)
