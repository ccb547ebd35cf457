"""The JSON certificate and the clause-level JUnit XML of a kit run.

Certificate schema (``schema: flux-schedkit-certificate/1``; a change that
removes or renames a field bumps the number, additions do not)::

    {
      "schema": "flux-schedkit-certificate/1",
      "verdict": "pass" | "fail",
      "summary": {"pass": N, "fail": N, "n/a": N},
      "scheduler": {"target": str, "path": str | null, "sha256": str | null,
                    "args": [str], "policy": str},
      "versions": {"flux-schedkit": str, "flux-python": str, "python": str},
      "seed": int, "examples": int,
      "selected": [clause id] | null,
      "started": ISO 8601 UTC, "wall_seconds": float,
      "clauses": [{"id", "suite", "statement", "source", "verdict",
                   "reason", "probes": [str], "wall_seconds": float,
                   "evidence": [{"probe", "text", "time", "excerpt",
                                 "traceback"}]}],
      "probes": [{"name", "wall_seconds", "stats": {...}}]
    }

``time`` in evidence is virtual seconds since the broker started.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import platform
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path

from conformance.findings import FAIL
from conformance.verdicts import NOT_APPLICABLE, ClauseVerdict, ProbeRecord
from conformance.visible import visible

SCHEMA = "flux-schedkit-certificate/1"


def module_file(target: str) -> str | None:
    """The file a scheduler target names (``PATH.py`` or a dotted module,
    either with ``:Class``), without importing it; None if unknown."""
    module = target.partition(":")[0]
    if module.endswith(".py") or os.sep in module:
        path = Path(module).resolve()
        return str(path) if path.is_file() else None
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    return spec.origin if spec is not None and spec.origin else None


def sha256_of(path: str | None) -> str | None:
    if path is None:
        return None
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def build_certificate(
    *,
    target: str,
    args: Sequence[str],
    policy: str,
    seed: int,
    examples: int,
    selected: Sequence[str] | None,
    started: str,
    wall: float,
    results: Sequence[ClauseVerdict],
    records: Sequence[ProbeRecord],
) -> dict:
    """The certificate as a JSON-ready dict."""
    path = module_file(target)
    count = {
        k: sum(v.verdict == k for v in results) for k in ("pass", FAIL, NOT_APPLICABLE)
    }
    return {
        "schema": SCHEMA,
        "verdict": FAIL if count[FAIL] else "pass",
        "summary": count,
        "scheduler": {
            "target": target,
            "path": path,
            "sha256": sha256_of(path),
            "args": list(args),
            "policy": policy,
        },
        "versions": {
            "flux-schedkit": _version("flux-schedkit"),
            "flux-python": _version("flux-python"),
            "python": platform.python_version(),
        },
        "seed": seed,
        "examples": examples,
        "selected": list(selected) if selected is not None else None,
        "started": started,
        "wall_seconds": round(wall, 3),
        "clauses": [v.to_dict() for v in results],
        "probes": [
            {"name": r.probe, "wall_seconds": round(r.wall, 3), "stats": r.stats}
            for r in sorted(records, key=lambda r: r.probe)
        ],
    }


def write_json(path: str, data: dict) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2, sort_keys=False)
        f.write("\n")


def junit_xml(results: Sequence[ClauseVerdict], label: str) -> bytes:
    """JUnit XML with one test case per clause (suite = kit suite); text
    from the module has its control characters escaped, so the XML is
    well-formed whatever the module wrote."""
    label = visible(label)
    root = ET.Element("testsuites", name=f"flux-schedkit conformance: {label}")
    by_suite: dict[str, list[ClauseVerdict]] = {}
    for v in results:
        by_suite.setdefault(v.clause.suite, []).append(v)
    for suite, rows in by_suite.items():
        node = ET.SubElement(
            root,
            "testsuite",
            name=suite,
            tests=str(len(rows)),
            failures=str(sum(v.verdict == FAIL for v in rows)),
            skipped=str(sum(v.verdict == NOT_APPLICABLE for v in rows)),
            time=f"{sum(v.wall for v in rows):.3f}",
        )
        for v in rows:
            case = ET.SubElement(
                node,
                "testcase",
                classname=f"{label}.{suite}",
                name=v.clause.id,
                time=f"{v.wall:.3f}",
            )
            if v.verdict == FAIL:
                first = v.evidence[0].text if v.evidence else "failed"
                fail = ET.SubElement(case, "failure", message=visible(first[:500]))
                fail.text = visible(
                    "\n\n".join(
                        "\n".join(
                            x
                            for x in (
                                f"probe {e.probe}: {e.text}",
                                e.excerpt,
                                e.traceback,
                            )
                            if x
                        )
                        for e in v.evidence
                    )
                )
            elif v.verdict == NOT_APPLICABLE:
                reason = visible(v.reason or "not applicable")
                ET.SubElement(case, "skipped", message=reason)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)


def write_junit(path: str, results: Sequence[ClauseVerdict], label: str) -> None:
    Path(path).write_bytes(junit_xml(results, label))


__all__ = [
    "SCHEMA",
    "build_certificate",
    "junit_xml",
    "module_file",
    "sha256_of",
    "write_json",
    "write_junit",
]
