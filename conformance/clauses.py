"""The clause registry: what the kit certifies, one stable id per clause.

The registry is data (``clauses.yaml``, shipped with the package): each
clause has an id, the suite it belongs to, a one-line statement, its
source, the gallery fault that demonstrates it, the referee violation
kinds that fail it and, for the policy suite, the declared policies it
applies to.  The docs' clause catalogue is generated from the same file.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import yaml

#: The suites, in report order.
SUITES = ("protocol", "policy", "robustness", "scale")
#: Policies a scheduler may declare; ``any`` gets no policy clause.
POLICIES = ("fifo", "easy", "conservative", "any")

#: Clauses the runner judges on every probe from how the child process
#: fared (budgets, crashes, stray threads), not from what the probe saw.
GENERIC_CLAUSES = (
    "callbacks.prompt",
    "robust.no-hang",
    "robust.no-crash",
    "robust.memory",
    "robust.no-livelock",
    "robust.no-stray-threads",
)

#: What the referee must have seen on a probe's brokers for a clause it
#: judges to count as exercised there (the clause's ``exercised_by``): a
#: clause about SUCCESS responses says nothing of a module that never sent
#: one, so no probe passes it then, and with none exercising it the clause
#: is not applicable.
OCCASIONS = {
    "alloc-response": "an alloc response",
    "annotate": "an ANNOTATE response",
    "success": "a SUCCESS response",
    "constrained-success": "a SUCCESS for a job with a constraint",
    "cancel": "a sched.cancel sent for an open request",
    "free": "a sched.free sent",
    "t-estimate": "a sched.t_estimate annotation",
    "start": "a job started",
}

REGISTRY_PATH = Path(__file__).resolve().parent / "clauses.yaml"


@dataclass(frozen=True)
class Clause:
    """One certified statement about a scheduler."""

    id: str
    suite: str
    statement: str
    source: str
    fault: str
    referee: tuple[str, ...] = ()
    policies: tuple[str, ...] = ()
    #: The :data:`OCCASIONS` key a referee clause needs seen to be judged
    #: ("" for one judged on every probe).
    exercised_by: str = ""

    def applies_to(self, policy: str) -> bool:
        """False for a policy clause of a policy other than *policy*."""
        return not self.policies or policy in self.policies


class RegistryError(ValueError):
    """The clause registry file is malformed (a packaging error)."""


@functools.cache
def load_clauses() -> dict[str, Clause]:
    """Every clause, by id, in registry order."""
    data = yaml.safe_load(REGISTRY_PATH.read_text(encoding="utf-8"))
    out: dict[str, Clause] = {}
    for entry in data:
        try:
            clause = Clause(
                id=entry["id"],
                suite=entry["suite"],
                statement=entry["statement"],
                source=entry["source"],
                fault=entry["fault"],
                referee=tuple(entry.get("referee", ())),
                policies=tuple(entry.get("policies", ())),
                exercised_by=entry.get("exercised_by", ""),
            )
        except (KeyError, TypeError) as exc:
            raise RegistryError(f"{REGISTRY_PATH}: bad entry {entry!r}") from exc
        if clause.suite not in SUITES:
            raise RegistryError(f"{clause.id}: unknown suite {clause.suite!r}")
        if clause.exercised_by and (
            clause.exercised_by not in OCCASIONS or not clause.referee
        ):
            raise RegistryError(
                f"{clause.id}: exercised_by {clause.exercised_by!r} needs referee "
                f"kinds and one of {', '.join(OCCASIONS)}"
            )
        if clause.id in out:
            raise RegistryError(f"{clause.id}: defined twice")
        out[clause.id] = clause
    return out


@functools.cache
def clause_for_kind() -> dict[str, str]:
    """Referee violation kind -> the id of the clause it fails."""
    return {kind: c.id for c in load_clauses().values() for kind in c.referee}


def referee_clauses() -> tuple[str, ...]:
    """Ids of the clauses judged by the referee on every probe's brokers."""
    return tuple(c.id for c in load_clauses().values() if c.referee)


__all__ = [
    "GENERIC_CLAUSES",
    "OCCASIONS",
    "POLICIES",
    "SUITES",
    "Clause",
    "RegistryError",
    "clause_for_kind",
    "load_clauses",
    "referee_clauses",
]
