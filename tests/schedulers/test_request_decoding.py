"""The base class reads each alloc request's payload once: answers (the KVS
commit of R, SUCCESS, ANNOTATE, DENY, CANCEL) use the job id it remembered,
not a new decode of the request (jobspec and environment included)."""

from __future__ import annotations

import collections

import pytest
from conftest import POLICIES, start_broker, whole_nodes
from flux.message import Message
from flux.scheduler import AllocRequest

from flux_sched_base.answers import _request


@pytest.fixture
def decodes(monkeypatch):
    """Count module-side decodes of each ``sched.alloc`` request's payload."""
    counts: collections.Counter = collections.Counter()
    plain = Message.payload

    def counted(msg):
        if msg._module_side and msg.topic == "sched.alloc":
            counts[msg.matchtag] += 1
        return plain.fget(msg)

    monkeypatch.setattr(Message, "payload", property(counted, plain.fset))
    return counts


@pytest.mark.parametrize("policy", POLICIES)
def test_each_request_is_decoded_once(policy, decodes):
    b = start_broker(policy)
    started = b.jobs.submit(whole_nodes(4, 100), runtime=50)
    waiting = b.jobs.submit(whole_nodes(4, 100), runtime=50)  # gets ANNOTATEs
    denied = b.jobs.submit(whole_nodes(9, 100), runtime=50)
    canceled = b.jobs.submit(whole_nodes(4, 100), runtime=50)
    b.run_until_quiet()
    b.jobs.cancel(canceled)
    b.run()
    assert b.jobs.job(started).result == b.jobs.job(waiting).result == "completed"
    assert b.jobs.job(denied).result == "denied"
    assert b.jobs.job(canceled).result == "canceled"
    assert len(decodes) == 4 and set(decodes.values()) == {1}
    b.observer.assert_clean()


def test_request_made_without_decoding_equals_flux_pythons():
    msg = Message.create(0x01, "sched.alloc", {"id": 42, "jobspec": {}})
    msg._module_side = True
    ours, theirs = _request("sched", msg, 42), AllocRequest("sched", msg)
    for name in AllocRequest.__slots__:
        assert getattr(ours, name) == getattr(theirs, name), name
