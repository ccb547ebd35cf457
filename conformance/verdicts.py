"""From probe outcomes to one verdict per clause.

A clause fails if any probe found it broken, passes if at least one probe
judged it and none found it broken, and is *not applicable* when no probe
that ran could judge it (a policy clause for another policy, or a clause
left out of the run).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from conformance.clauses import Clause, load_clauses
from conformance.findings import FAIL, NOT_APPLICABLE, PASS, Evidence, Finding


@dataclass
class ClauseVerdict:
    """The verdict on one clause and what it rests on."""

    clause: Clause
    verdict: str = NOT_APPLICABLE
    probes: list[str] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)
    wall: float = 0.0
    reason: str = ""

    def to_dict(self) -> dict:
        c = self.clause
        return {
            "id": c.id,
            "suite": c.suite,
            "statement": c.statement,
            "source": c.source,
            "verdict": self.verdict,
            "reason": self.reason,
            "probes": sorted(self.probes),
            "wall_seconds": round(self.wall, 3),
            "evidence": [vars(e) for e in self.evidence],
        }


@dataclass
class ProbeRecord:
    """What one probe run produced, as the kit keeps it."""

    probe: str
    findings: list[Finding]
    wall: float
    stats: dict


def verdicts(
    records: Iterable[ProbeRecord],
    *,
    policy: str = "any",
    selected: Iterable[str] | None = None,
) -> list[ClauseVerdict]:
    """One :class:`ClauseVerdict` per clause, in registry order (only the
    *selected* clause ids, if given)."""
    clauses = load_clauses()
    wanted = set(selected) if selected is not None else set(clauses)
    out = {cid: ClauseVerdict(c) for cid, c in clauses.items() if cid in wanted}
    for record in records:
        for f in record.findings:
            v = out.get(f.clause)
            if v is None:
                continue
            if record.probe not in v.probes:
                v.probes.append(record.probe)
                v.wall += record.wall
            if f.verdict == FAIL:
                v.verdict = FAIL
                if f.evidence is not None:
                    v.evidence.append(f.evidence)
            elif f.verdict == PASS and v.verdict == NOT_APPLICABLE:
                v.verdict = PASS
            elif f.verdict == NOT_APPLICABLE and f.evidence is not None:
                v.reason = f.evidence.text
    for v in out.values():
        if v.verdict != NOT_APPLICABLE:
            v.reason = ""
        elif not v.reason:
            if not v.clause.applies_to(policy):
                wanted_policy = "/".join(v.clause.policies)
                v.reason = f"applies to policy {wanted_policy}; declared {policy}"
            else:
                v.reason = "no probe that ran could judge it"
    return list(out.values())


def overall(results: Iterable[ClauseVerdict]) -> str:
    """``fail`` if any clause failed, else ``pass``."""
    return FAIL if any(v.verdict == FAIL for v in results) else PASS


__all__ = ["NOT_APPLICABLE", "ClauseVerdict", "ProbeRecord", "overall", "verdicts"]
