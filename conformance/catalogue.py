"""The clause catalogue, rendered from the registry (``clauses.yaml``).

``flux-schedkit clauses`` prints it as text; the docs build writes the
reStructuredText form (:func:`catalogue_rst`) into ``docs/clauses.rst``'s
include, so the catalogue never drifts from the registry.
"""

from __future__ import annotations

from conformance.clauses import SUITES, load_clauses

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
        out.append("")
    return "\n".join(out)


def catalogue_rst() -> str:
    """The catalogue as reStructuredText sections with a table each."""
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
            out += [
                f"   * - ``{c.id}``",
                f"     - {_esc(statement)}",
                f"     - {_esc(c.source)}",
                f"     - {_esc(c.fault)}",
            ]
        out.append("")
    return "\n".join(out)


def _esc(text: str) -> str:
    return text.replace("*", r"\*").replace("`", "'").replace("|", r"\|")


__all__ = ["catalogue_rst", "catalogue_text"]
