"""Schedulers loaded with ``pool-class=`` naming the SplitPool pass the
protocol suite, clause by clause: the reference schedulers, and two that
are not built on ``flux_sched_base`` (the minimal example of flux-core's
guide *Writing a Python Scheduler*, but for R's times, which it leaves
unset, and the kit's gallery FIFO).  In process, as in ``test_protocol_suite.py``;
``flux-schedkit conform --args "pool-class=flux_sched_base.split_pool"``
runs the whole kit."""

from __future__ import annotations

import pytest
from test_protocol_suite import (
    CORRECT,
    KNOWN_FAULTS,
    PROTOCOL,
    check_judged,
    suite_probes,
)

from conformance.findings import FAIL, PASS
from conformance.probes import execute

POOLS = {
    "SplitPool": "pool-class=flux_sched_base.split_pool",
    "SplitPoolMinNodesAnySlots": (
        "pool-class=flux_sched_base.split_pool:SplitPoolMinNodesAnySlots"
    ),
}


@pytest.mark.parametrize(
    "scheduler, pool",
    [
        ("easy", "SplitPool"),
        ("fifo", "SplitPool"),
        ("conservative", "SplitPool"),
        ("easy", "SplitPoolMinNodesAnySlots"),
        ("seed_minimal", "SplitPool"),
        ("correct_fifo", "SplitPool"),
    ],
)
def test_the_protocol_suite_passes_with_the_split_pool(scheduler, pool):
    problems, judged, reasons = [], set(), {}
    known, failed = KNOWN_FAULTS.get(scheduler, set()), set()
    loaded = False
    for name in suite_probes():
        findings, _ = execute(name, CORRECT[scheduler], [POOLS[pool]])
        for f in findings:
            if f.verdict == FAIL:
                failed.add(f.clause)
                if f.clause not in known:
                    problems.append(f"{name}: {f.clause}: {f.evidence.text}")
            elif f.verdict == PASS and f.clause in PROTOCOL:
                judged.add(f.clause)
                loaded = loaded or f.clause == "load.reaches-reactor"
            elif f.clause in PROTOCOL and f.evidence is not None:
                reasons.setdefault(f.clause, []).append(f.evidence.text)
    assert not problems, "\n".join(problems)
    assert failed == known
    assert loaded
    check_judged(scheduler, judged | known, reasons)


def test_a_pool_class_that_does_not_exist_fails_the_load():
    findings, _ = execute(
        "protocol:ready-mode",
        CORRECT["easy"],
        ["pool-class=flux_sched_base.split_pool:NoSuchPool"],
    )
    failed = [f for f in findings if f.verdict == FAIL]
    assert failed and "could not load pool class" in failed[0].evidence.text
