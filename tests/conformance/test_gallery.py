"""The gallery: every clause catches the single-fault scheduler made for
it, in the kit's isolated runner, and the correct modules fail nothing.

Each gallery module declares ``CLAUSE`` (and optionally ``POLICY`` and
``ARGS``) as top-level literals, read without importing them
(:func:`conformance.catalogue.gallery_declarations`) because some of
these modules hang or crash at import on purpose.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.catalogue import gallery_declarations as _declared
from conformance.clauses import GENERIC_CLAUSES, load_clauses
from conformance.findings import FAIL
from conformance.probes import all_probes
from conformance.runner import Budgets, Runner

GALLERY = Path(__file__).parent / "gallery"
REFERENCE = Path(__file__).parents[2] / "schedulers"

#: Small budgets: the gallery's hung modules end quickly.
BUDGETS = Budgets(probe_wall=20.0, callback_wall=1.0, memory_mb=1024)


MODULES = sorted(p for p in GALLERY.glob("*.py") if not p.name.startswith("_"))
FAULTS = [(p, _declared(p)) for p in MODULES if _declared(p)["CLAUSE"]]
CORRECT = [(p, _declared(p)) for p in MODULES if not _declared(p)["CLAUSE"]]


def _probes_for(clause: str, policy: str) -> list[str]:
    """The probes that judge *clause*, the cheap ones only where there are
    some (the referee judges its clauses on every probe)."""
    probes = [p for p in all_probes().values() if p.applies_to(policy)]
    if clause in GENERIC_CLAUSES:
        # Judged on every probe: a library scenario exercises the module.
        return ["scenario:cancel-pending-job"]
    judging = [p for p in probes if clause in p.judges()]
    cheap = [p for p in judging if p.cost == 1]
    return [p.name for p in (cheap or judging)]


def _run(path: Path, declared: dict, probes: list[str]) -> list:
    findings = []
    with Runner(
        str(path), list(declared["ARGS"]), policy=declared["POLICY"], budgets=BUDGETS
    ) as runner:
        for name in probes:
            findings.extend(runner.run(name).findings)
    return findings


def test_every_clause_has_a_gallery_fault():
    demonstrated = {d["CLAUSE"] for _, d in FAULTS}
    missing = [c for c in load_clauses() if c not in demonstrated]
    assert not missing, f"clauses without a gallery fault: {missing}"


def test_gallery_declarations_name_real_clauses():
    clauses = load_clauses()
    for path, d in FAULTS:
        assert d["CLAUSE"] in clauses, path.name


@pytest.mark.parametrize("path, declared", FAULTS, ids=[p.stem for p, _ in FAULTS])
def test_the_clause_that_names_the_fault_catches_it(path, declared):
    clause = declared["CLAUSE"]
    probes = _probes_for(clause, declared["POLICY"])
    assert probes, f"no probe judges {clause}"
    findings = _run(path, declared, probes)
    failed = [f for f in findings if f.clause == clause and f.verdict == FAIL]
    assert failed, f"{clause} did not catch {path.name}"
    assert failed[0].evidence is not None and failed[0].evidence.text
