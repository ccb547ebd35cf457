"""Findings: what one probe concluded about one clause, with evidence.

A finding travels from the child process that ran the probe to the kit
(as JSON), so everything in it is plain data.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

PASS, FAIL = "pass", "fail"
#: A probe found the clause does not apply to this scheduler (for example
#: feasibility without a ``feasibility`` service); the evidence says why.
NOT_APPLICABLE = "n/a"


@dataclass
class Evidence:
    """Why a clause failed: where, when, and what the transcript shows.

    Attributes:
        probe: the probe (scenario) that found it.
        text: one or two sentences.
        time: virtual seconds since the broker started, if known.
        excerpt: transcript lines around the offending message.
        traceback: the scheduler's traceback, where it raised (its file
            and line are in it).
    """

    probe: str
    text: str
    time: float | None = None
    excerpt: str = ""
    traceback: str = ""


@dataclass
class Finding:
    """One probe's verdict on one clause."""

    clause: str
    verdict: str  # PASS, FAIL or NOT_APPLICABLE
    evidence: Evidence | None = None
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> Finding:
        ev = d.get("evidence")
        return cls(
            d["clause"],
            d["verdict"],
            Evidence(**ev) if ev is not None else None,
            dict(d.get("extra") or {}),
        )


def passed(clause: str) -> Finding:
    """A finding that *clause* held."""
    return Finding(clause, PASS)


def failed(clause: str, probe: str, text: str, **evidence) -> Finding:
    """A finding that *clause* failed, with *text* and optional evidence."""
    return Finding(clause, FAIL, Evidence(probe, text, **evidence))


def not_applicable(clause: str, probe: str, text: str) -> Finding:
    """A finding that *clause* does not apply (or was not exercised), and why."""
    return Finding(clause, NOT_APPLICABLE, Evidence(probe, text))


__all__ = [
    "FAIL",
    "NOT_APPLICABLE",
    "PASS",
    "Evidence",
    "Finding",
    "failed",
    "not_applicable",
    "passed",
]
