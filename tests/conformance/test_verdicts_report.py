"""Clause verdicts, the terminal report, the certificate and JUnit XML."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from conformance.certificate import SCHEMA, build_certificate, junit_xml, module_file
from conformance.clauses import SUITES, load_clauses
from conformance.findings import FAIL, PASS, Evidence, Finding
from conformance.report import summary_line, write_report
from conformance.verdicts import NOT_APPLICABLE, ProbeRecord, verdicts


def _records():
    ev = Evidence("scenario:x", "R overlaps job f2", 12.5, "   12.500 #7 ...", "")
    return [
        ProbeRecord(
            "scenario:x",
            [
                Finding("alloc.R-disjoint", FAIL, ev),
                Finding("alloc.R-inside-pool", PASS),
            ],
            0.25,
            {},
        ),
        ProbeRecord(
            "scenario:y",
            [Finding("alloc.R-disjoint", PASS), Finding("alloc.R-inside-pool", PASS)],
            0.5,
            {"passes": 3},
        ),
    ]


def test_registry_ids_are_unique_and_suites_known():
    clauses = load_clauses()
    assert len(clauses) >= 40
    assert {c.suite for c in clauses.values()} == set(SUITES)
    for c in clauses.values():
        assert c.statement and c.source and c.fault, c.id


def test_a_failure_anywhere_fails_the_clause_and_passes_need_a_judge():
    results = {v.clause.id: v for v in verdicts(_records(), policy="any")}
    assert results["alloc.R-disjoint"].verdict == FAIL
    assert results["alloc.R-disjoint"].evidence[0].time == 12.5
    assert results["alloc.R-inside-pool"].verdict == PASS
    assert results["alloc.R-inside-pool"].wall == pytest.approx(0.75)
    assert results["stats.answers"].verdict == NOT_APPLICABLE
    assert results["policy.fifo-order"].reason.startswith("applies to policy fifo")


def test_selection_limits_the_clauses_reported():
    results = verdicts(_records(), selected={"alloc.R-inside-pool"})
    assert [v.clause.id for v in results] == ["alloc.R-inside-pool"]


def test_report_has_table_summary_and_evidence():
    lines: list[str] = []
    write_report(lines.append, verdicts(_records()), "x.py (policy any)")
    text = "\n".join(lines)
    assert "protocol suite" in text
    assert any(
        line.strip().startswith("alloc.R-disjoint") and "FAIL" in line for line in lines
    )
    assert "x.py (policy any): 1 pass, 1 fail," in text
    assert "FAIL alloc.R-disjoint" in text
    assert "probe scenario:x at t=12.500: R overlaps job f2" in text
    assert "transcript:" in text


def test_summary_line_passes_without_failures():
    results = verdicts(_records()[1:])
    assert summary_line(results, "s").endswith("-> PASS")


def test_certificate_fields(tmp_path):
    sched = tmp_path / "s.py"
    sched.write_text("def mod_main(h, *a):\n    pass\n")
    results = verdicts(_records())
    cert = build_certificate(
        target=str(sched),
        args=["queue-depth=8"],
        policy="any",
        seed=7,
        examples=20,
        selected=None,
        started="2026-11-23T00:00:00Z",
        wall=1.5,
        results=results,
        records=_records(),
    )
    json.dumps(cert)  # plain data
    assert cert["schema"] == SCHEMA
    assert cert["verdict"] == "fail"
    assert cert["scheduler"]["path"] == str(sched)
    assert len(cert["scheduler"]["sha256"]) == 64
    assert cert["scheduler"]["args"] == ["queue-depth=8"]
    assert cert["versions"]["flux-python"] == "0.88.0"
    assert cert["seed"] == 7
    by_id = {c["id"]: c for c in cert["clauses"]}
    assert by_id["alloc.R-disjoint"]["evidence"][0]["text"] == "R overlaps job f2"
    assert cert["probes"][1]["stats"] == {"passes": 3}


def test_module_file_of_a_dotted_module_and_a_missing_path(tmp_path):
    assert module_file("json:JSONDecoder").endswith("json/__init__.py")
    assert module_file(str(tmp_path / "nope.py")) is None


def test_junit_has_one_case_per_clause_with_failures_and_skips():
    results = verdicts(_records())
    root = ET.fromstring(junit_xml(results, "x"))
    cases = root.findall(".//testcase")
    assert len(cases) == len(load_clauses())
    failed = [c for c in cases if c.find("failure") is not None]
    assert [c.get("name") for c in failed] == ["alloc.R-disjoint"]
    assert "R overlaps job f2" in failed[0].find("failure").text
    skipped = [c for c in cases if c.find("skipped") is not None]
    assert len(skipped) == len(load_clauses()) - 2


def _hostile_records():
    # What a module can put in evidence: escape sequences (alternate screen,
    # hidden cursor, window title), a carriage return, a NUL, a lone
    # surrogate (from undecodable bytes).
    text = "deny \x1b[?1049h\x1b[?25l\x1b]0;owned\x07 note\r\x00 \udc80 end"
    ev = Evidence("scenario:x", text, 1.0, "   1.000 #3 " + text, "Error: " + text)
    return [ProbeRecord("scenario:x", [Finding("alloc.R-disjoint", FAIL, ev)], 0.1, {})]


def test_module_text_reaches_the_terminal_with_its_control_characters_escaped():
    lines: list[str] = []
    write_report(lines.append, verdicts(_hostile_records()), "m\x1b[2J.py")
    out = "\n".join(lines)
    assert (
        "deny \\x1b[?1049h\\x1b[?25l\\x1b]0;owned\\x07 note\\x0d\\x00 \\udc80 end"
        in out
    )
    assert not any(ch in out for ch in "\x1b\x07\r\x00\udc80")


def test_junit_is_well_formed_whatever_the_module_wrote():
    data = junit_xml(verdicts(_hostile_records()), "m\x1b.py")
    root = ET.fromstring(data)  # raises on ill-formed XML
    failure = root.find(".//testcase[@name='alloc.R-disjoint']/failure")
    assert "\\x1b]0;owned\\x07" in failure.get("message")
    assert "\\udc80" in failure.text and "\x1b" not in failure.text
