"""Read workload traces in the Standard Workload Format (SWF).

SWF is the format of the Parallel Workloads Archive (Feitelson, Tsafrir
and Krakov, "Experience with using the Parallel Workloads Archive", JPDC
74(10), 2014): one job a line, 18 whitespace-separated numeric fields,
``;`` starting header comments such as ``; MaxProcs: 100``.  -1 means
unknown.

A replay needs, per job, the submit time (field 2), the run time (4), the
processors requested (8, or allocated, 5, where requested is -1) and the
requested time (9), the user's estimate.  A record without a usable
submit time, size or run time cannot be replayed: it is *unusable* and
counted.  A line that is not 18 numbers is *malformed*: an error naming
the file and line, or, with ``skip_malformed``, counted and passed over.

Files are read as plain text or gzip (recognised by its magic bytes, not
the name); a truncated or corrupt gzip file is an :class:`SWFError` too.
"""

from __future__ import annotations

import gzip
import math
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

#: Fields of an SWF record.
SWF_FIELDS = 18
#: How many malformed line numbers a trace keeps (the count is exact).
MALFORMED_KEPT = 20

_GZIP_MAGIC = b"\x1f\x8b"
# "; MaxProcs: 100" -> ("MaxProcs", "100"); continuation lines of a
# multi-line header value ("; <spaces> http://...") have no "Key: " and
# are ignored.
_HEADER = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_]*)\s*:(?:\s+(.*?))?\s*$")


class SWFError(ValueError):
    """A trace that cannot be read; the message names the file (and line)."""


@dataclass(frozen=True)
class SWFJob:
    """One usable job of a trace (times in seconds, in the log's own time).

    *requested_time* is the user's estimate, 0.0 where the trace does not
    know it (SWF's -1); *procs* is the requested processor count, or the
    allocated one where the request is unknown.
    """

    job_id: int
    submit: float
    wait: float
    run: float
    procs: int
    requested_time: float
    status: int
    user: int


@dataclass(frozen=True)
class Window:
    """Submit times from *start* (included) to *end* (excluded), in the
    trace's seconds; None leaves that side open."""

    start: float | None = None
    end: float | None = None

    def __contains__(self, submit: float) -> bool:
        return (self.start is None or submit >= self.start) and (
            self.end is None or submit < self.end
        )

    def __str__(self) -> str:
        def side(value):
            return "" if value is None else f"{value:g}"

        return f"{side(self.start)}:{side(self.end)}"


@dataclass
class SWFTrace:
    """A trace: its header fields, its selected jobs in file order, and what
    was passed over."""

    path: str
    header: dict[str, str]
    jobs: list[SWFJob]
    #: Data lines read (records), usable or not; lines after a ``limit``
    #: was reached are not read.
    records: int = 0
    #: Records with no usable submit time, size or run time.
    unusable: int = 0
    #: Malformed lines passed over with ``skip_malformed`` (a count).
    malformed: int = 0
    #: The first :data:`MALFORMED_KEPT` malformed line numbers.
    malformed_lines: list[int] = field(default_factory=list)
    #: Usable jobs submitted outside the window.
    outside_window: int = 0
    #: Usable jobs in the window passed over by ``skip``.
    passed_over: int = 0

    def _int_field(self, name: str) -> int | None:
        value = self.header.get(name, "")
        try:
            return int(value)
        except ValueError:
            return None

    @property
    def max_procs(self) -> int | None:
        """The ``MaxProcs`` header field (processors in the machine)."""
        value = self._int_field("MaxProcs")
        return value if value is not None and value > 0 else None

    @property
    def max_nodes(self) -> int | None:
        """The ``MaxNodes`` header field (nodes in the machine)."""
        value = self._int_field("MaxNodes")
        return value if value is not None and value > 0 else None

    @property
    def unix_start_time(self) -> int | None:
        """The ``UnixStartTime`` header field: the log's time 0 as a Unix
        time (seconds), if the header gives it."""
        value = self._int_field("UnixStartTime")
        return value if value is not None and value >= 0 else None

    @property
    def skipped(self) -> int:
        """Unusable records (the name this field had before malformed
        lines and windows were counted separately)."""
        return self.unusable


def _lines(path: Path) -> Iterator[str]:
    """The lines of *path*, decompressed if it is gzip; read errors become
    :class:`SWFError`."""
    try:
        with open(path, "rb") as raw:
            compressed = raw.read(2) == _GZIP_MAGIC
    except IsADirectoryError:
        raise SWFError(f"{path}: is a directory, not a trace") from None
    opener = gzip.open if compressed else open
    try:
        with opener(path, "rt", encoding="utf-8", errors="replace") as fh:
            yield from fh
    except EOFError:
        raise SWFError(f"{path}: the gzip file is truncated") from None
    except (gzip.BadGzipFile, zlib.error) as exc:
        raise SWFError(f"{path}: the gzip file is corrupt ({exc})") from None


def _numbers(text: str) -> list[float] | str:
    """The 18 numbers of a record, or why the line is not one."""
    fields = text.split()
    if len(fields) != SWF_FIELDS:
        return f"{len(fields)} fields, an SWF record has {SWF_FIELDS}"
    try:
        values = [float(f) for f in fields]
    except ValueError:
        bad = next(f for f in fields if not _is_number(f))
        return f"field {fields.index(bad) + 1} is {bad!r}, not a number"
    for k, value in enumerate(values):
        if not math.isfinite(value):
            return f"field {k + 1} is {fields[k]!r}, not a finite number"
    return values


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _job(values: list[float]) -> SWFJob | None:
    """The job a record describes, or None if it cannot be replayed."""
    submit, wait, run = values[1], values[2], values[3]
    procs = int(values[7]) if values[7] > 0 else int(values[4])
    if submit < 0 or run < 0 or procs <= 0:
        return None
    return SWFJob(
        job_id=int(values[0]),
        submit=submit,
        wait=wait,
        run=run,
        procs=procs,
        requested_time=max(values[8], 0.0),
        status=int(values[10]),
        user=int(values[11]),
    )


def read_swf(
    path: str | Path,
    limit: int | None = None,
    skip: int = 0,
    *,
    window: Window | None = None,
    skip_malformed: bool = False,
) -> SWFTrace:
    """Read *path* (plain or gzip).

    Of the usable jobs submitted in *window* (default: all), the first
    *skip* are passed over, then at most *limit* are kept; reading stops
    once *limit* jobs are kept.  Unusable records are counted in
    :attr:`SWFTrace.unusable`.

    Raises:
        SWFError: a malformed line (file and line named) unless
            *skip_malformed*; a truncated or corrupt gzip file.
        OSError: *path* cannot be opened (missing, unreadable).
    """
    path = Path(path)
    trace = SWFTrace(str(path), {}, [])
    for lineno, line in enumerate(_lines(path), 1):
        text = line.strip()
        if not text:
            continue
        if text.startswith(";"):
            match = _HEADER.match(text[1:])
            if match and match.group(1) not in trace.header:
                trace.header[match.group(1)] = match.group(2) or ""
            continue
        trace.records += 1
        values = _numbers(text)
        if isinstance(values, str):
            if not skip_malformed:
                raise SWFError(f"{path}:{lineno}: {values}")
            trace.malformed += 1
            if len(trace.malformed_lines) < MALFORMED_KEPT:
                trace.malformed_lines.append(lineno)
            continue
        job = _job(values)
        if job is None:
            trace.unusable += 1
        elif window is not None and job.submit not in window:
            trace.outside_window += 1
        elif trace.passed_over < skip:
            trace.passed_over += 1
        else:
            trace.jobs.append(job)
            if limit is not None and len(trace.jobs) >= limit:
                break
    return trace


__all__ = ["MALFORMED_KEPT", "SWFError", "SWFJob", "SWFTrace", "Window", "read_swf"]
