"""The test module the kit's pytest plugin collects: one test per probe.

Each test runs one probe on the scheduler under test in the kit's child
process and fails if the probe found a selected clause broken.  The clause
verdicts, the report and the certificate are assembled from all probes by
:mod:`conformance.plugin`.
"""

from __future__ import annotations

import json

import pytest

from conformance.findings import FAIL


def test_probe(schedkit_probe, schedkit_runner, schedkit_state, record_property):
    outcome = schedkit_runner.run(schedkit_probe)
    record_property(
        "schedkit",
        json.dumps(
            {
                "probe": outcome.probe,
                "wall": outcome.wall,
                "stats": outcome.stats,
                "findings": [f.to_dict() for f in outcome.findings],
            }
        ),
    )
    broken = [
        f
        for f in outcome.findings
        if f.verdict == FAIL and f.clause in schedkit_state.selected
    ]
    if broken:
        lines = [
            f"{f.clause}: {f.evidence.text if f.evidence else 'failed'}" for f in broken
        ]
        pytest.fail("\n".join(lines), pytrace=False)
