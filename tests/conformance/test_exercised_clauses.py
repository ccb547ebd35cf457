"""A clause the referee judges passes only where what it is about happened:
a module that never sends SUCCESS gets no pass on what R must be, only a
"not exercised" reason (and a failure wherever a probe finds one)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance import clauses as registry
from conformance.findings import FAIL, NOT_APPLICABLE, PASS, Evidence, Finding
from conformance.probes import execute
from conformance.verdicts import ProbeRecord, verdicts

GALLERY = Path(__file__).parent / "gallery"
CORRECT_FIFO = str(GALLERY / "correct_fifo.py")

#: Clauses about R, which only a SUCCESS response carries.
ABOUT_R = (
    "alloc.success-carries-R",
    "alloc.R-committed-first",
    "alloc.R-inside-pool",
    "alloc.R-up-and-undrained",
    "alloc.R-disjoint",
)


def _deny_all(tmp_path) -> str:
    """The gallery's correct FIFO, denying every job it could start."""
    path = tmp_path / "deny_all.py"
    path.write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(GALLERY)!r})\n"
        "from _base import GalleryFifo\n\n\n"
        "class DenyAll(GalleryFifo):\n"
        "    def start(self, job, alloc):\n"
        "        self.resources.free(job.jobid, alloc)\n"
        '        job.request.deny("this module starts nothing")\n\n\n'
        "def mod_main(h, *args):\n"
        "    DenyAll(h, *args).run()\n"
    )
    return str(path)


def _by_clause(findings) -> dict:
    return {f.clause: f for f in findings}


def test_clauses_about_R_are_not_passed_without_a_success(tmp_path):
    findings, _ = execute("scenario:deny-infeasible", _deny_all(tmp_path))
    found = _by_clause(findings)
    for clause in ABOUT_R:
        assert found[clause].verdict == NOT_APPLICABLE, clause
        assert found[clause].evidence.text == (
            "not exercised: no probe saw a SUCCESS response"
        )
    # It answered every request (DENY): that much was judged.
    assert found["alloc.response-well-formed"].verdict == PASS
    assert found["alloc.one-final-response"].verdict == PASS


def test_the_same_probe_passes_them_on_a_scheduler_that_starts_jobs():
    findings, _ = execute("scenario:deny-infeasible", CORRECT_FIFO)
    found = _by_clause(findings)
    for clause in (*ABOUT_R, "free.no-response", "annotations.no-stale"):
        assert found[clause].verdict == PASS, clause
    # It never annotates: nothing was said about annotations.
    assert found["alloc.annotate-has-annotations"].verdict == NOT_APPLICABLE


def test_one_probe_that_exercised_a_clause_passes_it_and_a_failure_still_wins():
    clause = "alloc.R-disjoint"
    unseen = Finding(
        clause,
        NOT_APPLICABLE,
        Evidence("a", "not exercised: no probe saw a SUCCESS response"),
    )
    only_unseen = verdicts([ProbeRecord("a", [unseen], 0.1, {})], selected=[clause])
    assert only_unseen[0].verdict == NOT_APPLICABLE
    assert only_unseen[0].reason.startswith("not exercised: ")
    passed = Finding(clause, PASS)
    one_saw = verdicts(
        [ProbeRecord("a", [unseen], 0.1, {}), ProbeRecord("b", [passed], 0.1, {})],
        selected=[clause],
    )
    assert (one_saw[0].verdict, one_saw[0].reason) == (PASS, "")
    broken = Finding(clause, FAIL, Evidence("c", "R overlaps"))
    records = [
        ProbeRecord(p, [f], 0.1, {})
        for p, f in (("a", unseen), ("b", passed), ("c", broken))
    ]
    assert verdicts(records, selected=[clause])[0].verdict == FAIL


def test_every_referee_clause_names_what_exercises_it():
    for clause in registry.load_clauses().values():
        if not clause.referee:
            assert not clause.exercised_by, clause.id
        elif clause.id == "robust.no-crash":
            # judged on every probe: a module that runs at all can die
            assert not clause.exercised_by
        else:
            assert clause.exercised_by in registry.OCCASIONS, clause.id


@pytest.mark.parametrize(
    "extra",
    ["  referee: [R-overlap]\n  exercised_by: sucess\n", "  exercised_by: success\n"],
)
def test_the_registry_refuses_an_unknown_or_misplaced_occasion(
    tmp_path, monkeypatch, extra
):
    path = tmp_path / "clauses.yaml"
    path.write_text(
        "- id: alloc.R-disjoint\n"
        "  suite: protocol\n"
        "  statement: s\n"
        "  source: s\n"
        "  fault: f\n" + extra
    )
    monkeypatch.setattr(registry, "REGISTRY_PATH", path)
    registry.load_clauses.cache_clear()
    try:
        with pytest.raises(registry.RegistryError, match="exercised_by"):
            registry.load_clauses()
    finally:
        monkeypatch.undo()
        registry.load_clauses.cache_clear()


# -- the budget clauses: a module that never ran kept no budget --------------------


def _outcome(module: Path, probe: str = "scenario:deny-infeasible"):
    from conformance.runner import Budgets, Runner

    budgets = Budgets(probe_wall=10.0, callback_wall=1.0, memory_mb=768)
    with Runner(str(module), [], budgets=budgets) as runner:
        return runner.run(probe)


@pytest.mark.parametrize(
    "text", ["", "x = 1\n", "def not_mod_main(h):\n    pass\n"], ids=repr
)
def test_budget_clauses_are_not_passed_for_a_module_whose_mod_main_never_ran(
    tmp_path, text
):
    module = tmp_path / "never_ran.py"
    module.write_text(text)
    found = _by_clause(_outcome(module).findings)
    for clause in registry.GENERIC_CLAUSES:
        assert found[clause].verdict == NOT_APPLICABLE, clause
        assert found[clause].evidence.text == (
            "not exercised: no probe ran the module's mod_main"
        )
    # What the probe is about fails: the module did not load.
    assert FAIL in {f.verdict for f in found.values()}


def test_a_crash_at_import_still_fails_no_crash(tmp_path):
    module = tmp_path / "exits_at_import.py"
    module.write_text("import os\nos._exit(3)\n")
    found = _by_clause(_outcome(module).findings)
    assert found["robust.no-crash"].verdict == FAIL
