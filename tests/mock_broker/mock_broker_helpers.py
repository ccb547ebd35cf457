"""Helpers shared by the mock broker tests (imported, not collected)."""

from __future__ import annotations

from pathlib import Path

from flux.idset import IDset

from mock_broker.jobspec import make_jobspec

SCHEDULERS = Path(__file__).parent / "schedulers"
SEED = str(SCHEDULERS / "seed_minimal.py")


def sched(name: str) -> str:
    """Path of a test scheduler file, with an optional ``:Class``."""
    return str(SCHEDULERS / name)


def whole_nodes(n: int = 1, cores: int = 4, **kw) -> dict:
    """A jobspec for *n* whole nodes of *cores* cores (one slot per node)."""
    return make_jobspec(nodes=n, slots=n, cores=cores, **kw)


def messages(broker, topic: str | None = None, start: int = 0) -> list[dict]:
    """Transcript message entries (as dicts), optionally of one topic.

    Requests have the bare topic (``sched.alloc``), responses the topic
    followed by `` (response)``; an error response's topic ends in
    `` [error text]``, which matching ignores.
    """
    out = []
    for entry in broker.transcript.entries(start):
        if entry.kind != "msg":
            continue
        d = entry.to_dict()
        if topic is None or d["topic"].split(" [", 1)[0] == topic:
            out.append(d)
    return out


def notes(broker, start: int = 0) -> list[str]:
    """The text of every non-message transcript entry."""
    return [e.text for e in broker.transcript.entries(start) if e.kind != "msg"]


def ranks(R: dict | None) -> list[int]:
    """The ranks an R object holds, sorted."""
    out: set[int] = set()
    for entry in ((R or {}).get("execution") or {}).get("R_lite", []):
        out.update(IDset(entry["rank"]))
    return sorted(out)


def allocated(broker) -> list[int]:
    """Ranks the scheduler's own pool has allocated (sched.resource-status)."""
    return ranks(broker.rpc("sched.resource-status")["allocated"])


def elapsed(broker, t: float | None) -> float | None:
    """A job timestamp as virtual seconds since the broker started."""
    return None if t is None else t - broker.clock.epoch


def marked_line(violation) -> str:
    """The transcript line the violation's excerpt points at (``>>``)."""
    marked = [ln for ln in violation.excerpt.splitlines() if ln.startswith(">>")]
    assert len(marked) == 1, violation.excerpt
    return marked[0]
