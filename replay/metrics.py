"""The figures of a replay, computed from its per-job records.

The definitions (``docs/replay.rst`` gives them with their sources):

- *wait*: start minus submit, over the jobs that started; mean, median and
  95th percentile (linear interpolation between the closest ranks, the
  ``inclusive`` method of :func:`statistics.quantiles`, as NumPy's
  default), and maximum.
- *bounded slowdown*: ``max(1, (wait + run) / max(run, 10 s))`` over the
  jobs that ran to their end (Feitelson, Rudolph, Schwiegelshohn, Sevcik
  and Wong, "Theory and practice in parallel job scheduling", JSSPP 1997;
  the 10 s threshold as in Feitelson, "Metrics for parallel job scheduling
  and their convergence", JSSPP 2001), so that very short jobs do not
  dominate the mean.
- *span*: from the first submission to the last (the stretch of the trace
  replayed); *makespan*: from the first submission to the last end.
- *utilization*: core-seconds held by jobs over the machine's cores times
  the makespan.
- *jobs per second*: jobs replayed per second of wall-clock time, the
  replay's own speed.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from replay.records import JobRecord

#: Bounded-slowdown threshold: jobs shorter than this count as this long.
BSLD_THRESHOLD = 10.0


@dataclass(frozen=True)
class Metrics:
    """The figures of one replay (times in seconds)."""

    jobs: int
    started: int
    completed: int
    timeout: int
    denied: int
    unfinished: int
    span: float
    makespan: float
    mean_wait: float
    median_wait: float
    p95_wait: float
    max_wait: float
    mean_bsld: float
    utilization: float
    wall_seconds: float
    jobs_per_second: float

    def to_dict(self) -> dict:
        """The JSON form."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Metrics:
        """The inverse of :meth:`to_dict`; unknown keys are ignored."""
        return cls(**{name: data[name] for name in cls.__dataclass_fields__})


def bounded_slowdown(wait: float, run: float) -> float:
    """A job's bounded slowdown (threshold :data:`BSLD_THRESHOLD`)."""
    return max(1.0, (wait + run) / max(run, BSLD_THRESHOLD))


def percentile_95(values: Sequence[float]) -> float:
    """The 95th percentile of *values* (linear interpolation between the
    closest ranks); 0.0 for no values."""
    if len(values) < 2:
        return float(values[0]) if values else 0.0
    return statistics.quantiles(values, n=20, method="inclusive")[18]


UNFINISHED = ("pending", "running")


def compute(
    records: Sequence[JobRecord], total_cores: int, wall_seconds: float = 0.0
) -> Metrics:
    """The figures of a replay of *records* on a machine of *total_cores*."""
    waits = [r.wait for r in records if r.wait is not None]
    ran = [(r.wait, r.run) for r in records if r.run is not None]
    first = min((r.submit for r in records), default=0.0)
    last_submit = max((r.submit for r in records), default=first)
    last_end = max((r.end for r in records if r.end is not None), default=first)
    makespan = last_end - first
    busy = sum(r.run * r.cores for r in records if r.run is not None)
    return Metrics(
        jobs=len(records),
        started=len(waits),
        completed=sum(r.result == "completed" for r in records),
        timeout=sum(r.result == "timeout" for r in records),
        denied=sum(r.result == "denied" for r in records),
        unfinished=sum(r.result in UNFINISHED for r in records),
        span=last_submit - first,
        makespan=makespan,
        mean_wait=statistics.fmean(waits) if waits else 0.0,
        median_wait=statistics.median(waits) if waits else 0.0,
        p95_wait=percentile_95(waits),
        max_wait=max(waits, default=0.0),
        mean_bsld=(
            statistics.fmean(bounded_slowdown(w, r) for w, r in ran) if ran else 0.0
        ),
        utilization=busy / (total_cores * makespan) if makespan > 0 else 0.0,
        wall_seconds=wall_seconds,
        jobs_per_second=len(records) / wall_seconds if wall_seconds > 0 else 0.0,
    )


__all__ = ["BSLD_THRESHOLD", "Metrics", "bounded_slowdown", "compute", "percentile_95"]
