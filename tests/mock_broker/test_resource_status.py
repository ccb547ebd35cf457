"""``resource.status`` answers with flux-core 0.88's payload, following the
mock's drained, down and shrunk ranks."""

from __future__ import annotations

import json

from mock_broker_helpers import sched

from mock_broker.runtime.broker import MockBroker


def _statuses(b: MockBroker) -> list[dict]:
    return [
        json.loads(t.removeprefix("status "))
        for _, _, _, t in b.logs
        if t.startswith("status ")
    ]


def test_resource_status_follows_drain_down_and_shrink():
    b = MockBroker()
    b.load(sched("status_probe.py"))
    b.run_for(1)
    b.resources.drain("1-2", reason="maint")
    b.resources.set_down("3")
    b.run_for(10)
    b.resources.undrain("2")
    b.resources.set_up("3")
    b.resources.shrink("0")
    b.run_for(10)
    first, drained, after = _statuses(b)[:3]
    assert first == {
        "R": b.resources.R,
        "drain": {},
        "online": "0-3",
        "offline": "",
        "exclude": "",
        "torpid": "",
    }
    when = round(b.clock.epoch + 1)
    assert drained["drain"] == {"1-2": {"timestamp": when, "reason": "maint"}}
    assert (drained["online"], drained["offline"]) == ("0-2", "3")
    assert after["drain"] == {"1": {"timestamp": when, "reason": "maint"}}
    assert (after["online"], after["offline"]) == ("1-3", "0")
