"""The clause catalogue, rendered from the registry (``clauses.yaml``).

``flux-schedkit clauses`` prints it as text; the docs build writes the
reStructuredText form (:func:`catalogue_rst`) into ``docs/clauses.rst``'s
include, so the catalogue never drifts from the registry.  The docs also
name, for each clause, the single-fault scheduler of the kit's gallery
(``tests/conformance/gallery/``) that demonstrates it: each gallery module
declares the clause that must catch it as a top-level literal ``CLAUSE``,
read by :func:`gallery_declarations` without importing the module (some
hang or crash at import on purpose).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from pathlib import Path

from conformance.clauses import OCCASIONS, SUITES, load_clauses

#: What a gallery module may declare, and the value when it does not.
GALLERY_DEFAULTS = {"CLAUSE": None, "POLICY": "any", "ARGS": []}


def gallery_declarations(path: str | Path) -> dict:
    """``CLAUSE``, ``POLICY`` and ``ARGS`` of the gallery module at *path*,
    read with :mod:`ast` (the module is not imported)."""
    values = dict(GALLERY_DEFAULTS)
    for node in ast.parse(Path(path).read_text()).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            name = getattr(node.targets[0], "id", None)
            if name in values:
                values[name] = ast.literal_eval(node.value)
    return values


def gallery_index(folder: str | Path) -> dict[str, list[str]]:
    """Clause id -> the file names of the gallery modules in *folder* that
    demonstrate it, sorted."""
    out: dict[str, list[str]] = {}
    for path in sorted(Path(folder).glob("*.py")):
        if path.name.startswith("_"):
            continue
        clause = gallery_declarations(path)["CLAUSE"]
        if clause:
            out.setdefault(clause, []).append(path.name)
    return out


_INTRO = {
    "protocol": "Every scheduler, whatever its policy: RFC 27 as flux-core 0.88's "
    "job-manager speaks it.",
    "policy": "The declared policy, judged instant by instant against an "
    "independent count-based model of its textbook definition.",
    "robustness": "Budgets, crashes, hostile jobspecs and random operation "
    "sequences: the kit ends each as a failed clause with evidence.",
    "scale": "A large workload, with pass-time statistics in the certificate.",
}


def catalogue_text() -> str:
    """One block per clause, grouped by suite."""
    out = []
    clauses = load_clauses().values()
    for suite in SUITES:
        out.append(f"{suite} suite")
        for c in clauses:
            if c.suite != suite:
                continue
            out.append(f"  {c.id}")
            out.append(f"    {c.statement}")
            out.append(f"    source: {c.source}")
            out.append(f"    demonstrated by: {c.fault}")
            if c.policies:
                out.append(f"    policies: {', '.join(c.policies)}")
            if c.exercised_by:
                out.append(f"    judged once the kit saw {OCCASIONS[c.exercised_by]}")
        out.append("")
    return "\n".join(out)


def catalogue_rst(gallery: Mapping[str, Sequence[str]] | None = None) -> str:
    """The catalogue as reStructuredText sections with a table each.

    *gallery* (see :func:`gallery_index`) adds, beside each clause's
    fault, the gallery modules that demonstrate it.
    """
    out = []
    clauses = list(load_clauses().values())
    for suite in SUITES:
        rows = [c for c in clauses if c.suite == suite]
        title = f"{suite.capitalize()} suite ({len(rows)} clauses)"
        out += [title, "-" * len(title), "", _INTRO[suite], ""]
        out += [".. list-table::", "   :header-rows: 1", "   :widths: 22 40 22 16", ""]
        out += [
            "   * - Clause",
            "     - Statement",
            "     - Source",
            "     - Fault that demonstrates it",
        ]
        for c in rows:
            statement = c.statement + (
                f" (policy: {', '.join(c.policies)})" if c.policies else ""
            )
            if c.exercised_by:
                statement += f" Judged once the kit saw {OCCASIONS[c.exercised_by]}."
            out += [
                f"   * - ``{c.id}``",
                f"     - {_esc(statement)}",
                f"     - {_esc(c.source)}",
                f"     - {_esc(c.fault)}{_gallery_note((gallery or {}).get(c.id))}",
            ]
        out.append("")
    return "\n".join(out)


def _gallery_note(files: Sequence[str] | None) -> str:
    if not files:
        return ""
    return " (" + ", ".join(f"``{name}``" for name in files) + ")"


def _esc(text: str) -> str:
    return text.replace("*", r"\*").replace("`", "'").replace("|", r"\|")


__all__ = ["catalogue_rst", "catalogue_text", "gallery_declarations", "gallery_index"]
