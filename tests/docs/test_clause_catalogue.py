"""The docs' clause catalogue names the gallery fault of every clause."""

from __future__ import annotations

from docs_helpers import ROOT

from conformance.catalogue import catalogue_rst, gallery_index
from conformance.clauses import load_clauses

GALLERY = ROOT / "tests" / "conformance" / "gallery"


def test_every_clause_row_names_its_gallery_module():
    gallery = gallery_index(GALLERY)
    rst = catalogue_rst(gallery)
    rows = rst.split("   * - ``")[1:]
    by_clause = {row.split("``", 1)[0]: row for row in rows}
    assert set(by_clause) == set(load_clauses())
    for clause, files in gallery.items():
        assert files, clause
        for name in files:
            assert f"``{name}``" in by_clause[clause], (clause, name)


def test_gallery_index_reads_declarations_without_importing(tmp_path):
    (tmp_path / "hangs.py").write_text(
        'CLAUSE = "robust.no-hang"\nwhile True:\n    pass\n'
    )
    (tmp_path / "correct.py").write_text("x = 1\n")
    (tmp_path / "_base.py").write_text('CLAUSE = "ignored"\n')
    assert gallery_index(tmp_path) == {"robust.no-hang": ["hangs.py"]}
