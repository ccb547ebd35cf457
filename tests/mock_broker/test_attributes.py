"""A module reads the broker attributes of a flux-core 0.88 instance of
size 1 (``flux lsattr``), fixed from run to run; others are ENOENT."""

from __future__ import annotations

import errno
import json

from mock_broker_helpers import sched

from mock_broker.runtime.broker import MockBroker

NAMES = [
    "instance-level",
    "rundir",
    "rank",
    "size",
    "hostname",
    "broker.pid",
    "broker.starttime",
    "broker.uuid",
    "security.owner",
    "version",
    "jobid",
    "no-such-attribute",
]


def _attrs(seed: int) -> dict:
    b = MockBroker(seed=seed)
    b.load(sched("attr_probe.py"), NAMES)
    [text] = [t for _, _, _, t in b.logs if t.startswith("attrs ")]
    return json.loads(text.removeprefix("attrs "))


def test_a_module_reads_the_attributes_a_size_1_instance_has():
    found = _attrs(seed=0)
    assert found["instance-level"] == "0"
    assert found["rundir"].startswith("/")
    assert (found["rank"], found["size"], found["hostname"]) == ("0", "1", "node0")
    assert found["version"] == "0.88.0"
    assert float(found["broker.starttime"]) > 0
    # Not a sub-instance: no jobid; an unknown name is ENOENT as ever.
    assert found["jobid"] == found["no-such-attribute"] == errno.ENOENT


def test_attributes_are_the_same_from_run_to_run():
    assert _attrs(seed=3) == _attrs(seed=3)
    assert _attrs(seed=3)["broker.uuid"] != _attrs(seed=4)["broker.uuid"]
