"""The kit's terminal report: a clause table grouped by suite, a summary
line, then the evidence for every failed clause."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from conformance.clauses import SUITES
from conformance.findings import FAIL, PASS
from conformance.verdicts import NOT_APPLICABLE, ClauseVerdict
from conformance.visible import visible

_MARK = {PASS: "pass", FAIL: "FAIL", NOT_APPLICABLE: "n/a"}
#: Transcript lines of evidence shown per failure in the terminal.
EXCERPT_LINES = 16
#: Failures shown in full per clause (the certificate has them all).
EVIDENCE_PER_CLAUSE = 2


def summary_line(results: Sequence[ClauseVerdict], label: str) -> str:
    """``label: N pass, N fail, N n/a -> PASS|FAIL``."""
    count = {k: sum(v.verdict == k for v in results) for k in _MARK}
    verdict = "FAIL" if count[FAIL] else "PASS"
    return (
        f"{label}: {count[PASS]} pass, {count[FAIL]} fail, "
        f"{count[NOT_APPLICABLE]} not applicable -> {verdict}"
    )


def write_report(
    write: Callable[[str], None],
    results: Sequence[ClauseVerdict],
    label: str,
    width: int = 100,
) -> None:
    """Write the table, the summary line and the failures with *write*
    (one call per line).  Text that came from the module is shown with its
    control characters escaped (:func:`~conformance.visible.visible`), and
    so is *label* (a file name may hold them too)."""
    label = visible(label)
    idw = max((len(v.clause.id) for v in results), default=10) + 2
    stw = max(20, width - idw - 16)
    for suite in SUITES:
        rows = [v for v in results if v.clause.suite == suite]
        if not rows:
            continue
        write("")
        write(f"{suite} suite")
        for v in rows:
            statement = v.clause.statement
            if len(statement) > stw:
                statement = statement[: stw - 3] + "..."
            time = f"{v.wall:6.1f}s" if v.probes else "      -"
            write(
                f"  {v.clause.id:<{idw}}{statement:<{stw}} {_MARK[v.verdict]:>4} {time}"
            )
    write("")
    write(summary_line(results, label))
    for v in results:
        if v.verdict != FAIL:
            continue
        write("")
        write(f"FAIL {v.clause.id}: {v.clause.statement}")
        write(f"  source: {v.clause.source}")
        for ev in v.evidence[:EVIDENCE_PER_CLAUSE]:
            when = f" at t={ev.time:.3f}" if ev.time is not None else ""
            write(f"  probe {ev.probe}{when}: {visible(ev.text)}")
            if ev.excerpt:
                lines = ev.excerpt.splitlines()[-EXCERPT_LINES:]
                write("  transcript:")
                for line in lines:
                    write(f"    {visible(line)}")
            if ev.traceback:
                write("  traceback:")
                for line in ev.traceback.rstrip().splitlines()[-24:]:
                    write(f"    {visible(line)}")
        more = len(v.evidence) - EVIDENCE_PER_CLAUSE
        if more > 0:
            write(f"  ... and {more} more (see the certificate)")
    na = [v for v in results if v.verdict == NOT_APPLICABLE and v.reason]
    if na:
        write("")
        write("not applicable:")
        for v in na:
            write(f"  {v.clause.id}: {visible(v.reason)}")


__all__ = ["write_report", "summary_line"]
