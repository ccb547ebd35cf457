"""Per-job records of a replay: what happened to every trace job.

A :class:`JobRecord` is built from the mock broker's job record after the
run; times are in the trace's own seconds, so a record can be set beside
the trace line it came from.  Records are what the metrics, the pictures
and the ``--json``/``--csv`` outputs are made from.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import cached_property

from mock_broker.flux_substitute.idset import IDset

#: Columns of the per-job table (``--csv``), in order.
CSV_COLUMNS = (
    "id",
    "submit",
    "start",
    "end",
    "wait",
    "run",
    "limit",
    "procs",
    "nodes",
    "cores",
    "ranks",
    "result",
    "estimate",
)


@dataclass(frozen=True)
class JobRecord:
    """One replayed job.

    *start*, *end*, *wait* and *run* (the time it held resources) are None
    for a job that never started or never ended.  *allocation* is the R it
    ran on, as ``(ranks, cores)`` idset pairs (RFC 20 ``R_lite``).
    *result* is the job-manager's: ``completed``, ``timeout``, ``denied``,
    ``canceled``, ``exception``, or ``pending``/``running`` for a job left
    unfinished.  *estimate* says where its limit came from: ``requested``
    or ``run time``.
    """

    id: int
    submit: float
    start: float | None
    end: float | None
    limit: float
    procs: int
    allocation: tuple[tuple[str, str], ...]
    result: str
    estimate: str

    @property
    def wait(self) -> float | None:
        """Seconds from submission to start."""
        return None if self.start is None else self.start - self.submit

    @property
    def run(self) -> float | None:
        """Seconds the job held its resources."""
        if self.start is None or self.end is None:
            return None
        return self.end - self.start

    @cached_property
    def ranks(self) -> str:
        """The broker ranks (nodes) it ran on, as an idset ("0-3,7")."""
        ranks: set[int] = set()
        for rank_set, _cores in self.allocation:
            ranks.update(IDset(rank_set))
        return str(IDset(sorted(ranks))) if ranks else ""

    @cached_property
    def nodes(self) -> int:
        """How many nodes it ran on."""
        return sum(len(IDset(r)) for r, _ in self.allocation)

    @cached_property
    def cores(self) -> int:
        """How many cores it held, on all its nodes."""
        return sum(len(IDset(r)) * len(IDset(c)) for r, c in self.allocation)

    def to_dict(self) -> dict:
        """The JSON form: the fields and the derived figures."""
        out = asdict(self)
        out["allocation"] = [list(pair) for pair in self.allocation]
        out.update(
            wait=self.wait,
            run=self.run,
            nodes=self.nodes,
            cores=self.cores,
            ranks=self.ranks,
        )
        return out

    @classmethod
    def from_dict(cls, data: dict) -> JobRecord:
        """The inverse of :meth:`to_dict` (derived figures are recomputed)."""
        return cls(
            id=int(data["id"]),
            submit=float(data["submit"]),
            start=None if data["start"] is None else float(data["start"]),
            end=None if data["end"] is None else float(data["end"]),
            limit=float(data["limit"]),
            procs=int(data["procs"]),
            allocation=tuple((str(r), str(c)) for r, c in data["allocation"]),
            result=str(data["result"]),
            estimate=str(data["estimate"]),
        )

    def csv_row(self) -> list:
        """The job's row of the per-job table (:data:`CSV_COLUMNS`)."""
        data = self.to_dict()
        return ["" if data[c] is None else data[c] for c in CSV_COLUMNS]


def allocation_of(R: dict | None) -> tuple[tuple[str, str], ...]:
    """``(ranks, cores)`` idset pairs of an Rv1 object's ``R_lite``."""
    out = []
    for entry in ((R or {}).get("execution") or {}).get("R_lite", []):
        cores = (entry.get("children") or {}).get("core", "")
        out.append((str(entry.get("rank", "")), str(cores)))
    return tuple(out)


__all__ = ["CSV_COLUMNS", "JobRecord", "allocation_of"]
