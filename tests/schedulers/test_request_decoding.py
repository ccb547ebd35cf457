"""The base class reads each alloc request's payload once: answers (the KVS
commit of R, SUCCESS, ANNOTATE, DENY, CANCEL) use the job id it remembered,
not a new decode of the request (jobspec and environment included).  A
final ``sched.free`` of exactly what a job was granted hands the allocation
back without parsing R; any other free is parsed as flux-python does."""

from __future__ import annotations

import collections

import pytest
from conftest import POLICIES, start_broker, whole_nodes
from flux.message import Message
from flux.scheduler import AllocRequest

from flux_sched_base.answers import _request
from mock_broker.jobmanager.jobs import ranks_of


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
        value = getattr(ours, name)
        if name == "_annotated_sched_keys":
            value = set(value)  # the same keys, kept in the order sent
        assert value == getattr(theirs, name), name
    keys = ours._annotated_sched_keys
    keys.update(["t_estimate", "reason_pending"])
    keys.update(["reason_pending", "t_estimate", "backfill"])
    assert list(keys) == ["t_estimate", "reason_pending", "backfill"]


@pytest.fixture
def parsed_frees(monkeypatch):
    """Count the pools the base class builds from ``sched.free`` messages."""
    from flux_sched_base import scheduler

    built = []
    plain = scheduler.ResourcePool

    def counted(R):
        built.append(R)
        return plain(R)

    monkeypatch.setattr(scheduler, "ResourcePool", counted)
    return built


@pytest.mark.parametrize("policy", POLICIES)
def test_a_final_free_of_the_whole_grant_is_not_parsed(policy, parsed_frees):
    b = start_broker(policy)
    # Each takes the whole machine: the next starts only if the free before
    # it gave every core back to the pool.
    jobs = [b.jobs.submit(whole_nodes(4, 100), runtime=10) for _ in range(3)]
    b.run()
    assert [b.jobs.job(j).result for j in jobs] == ["completed"] * 3
    assert parsed_frees == []
    b.observer.assert_clean()


@pytest.mark.parametrize("policy", POLICIES)
def test_partial_frees_and_the_final_rest_are_parsed(policy, parsed_frees):
    b = start_broker(policy)
    # Housekeeping gives the four nodes back one by one; the final free
    # carries the last node only, not what was granted.
    first = b.jobs.submit(
        whole_nodes(4, 100),
        runtime=10,
        release=[[0.0, [3]], [2.0, [2]], [4.0, [0]], [6.0, [1]]],
    )
    second = b.jobs.submit(whole_nodes(4, 100), runtime=10)
    b.run()
    assert b.jobs.job(first).result == b.jobs.job(second).result == "completed"
    assert b.jobs.job(second).t_run - b.jobs.job(first).t_run == pytest.approx(16.0)
    assert [list(ranks_of(R)) for R in parsed_frees] == [[3], [2], [0], [1]]
    b.observer.assert_clean()
