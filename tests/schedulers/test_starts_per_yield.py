"""STARTS_PER_YIELD: how many jobs a pass starts per return to the reactor,
and the KVS commits of R that the jobs started in one step share."""

from __future__ import annotations

import errno
import json

import pytest
from conftest import module_path

from conformance.referee import Referee
from flux_sched_base.answers import r_key
from mock_broker.jobspec import make_jobspec
from mock_broker.machine import Machine
from mock_broker.runtime.broker import MockBroker
from mock_broker.services.kvs import KVSError

BATCHED = """
import importlib.util

_spec = importlib.util.spec_from_file_location("schedkit_fifo_base", {path!r})
_base = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_base)


class Batched(_base.FifoScheduler):
    STARTS_PER_YIELD = {n}


def mod_main(h, *args):
    Batched(h, *args).run()
"""


def _messages(b, topic):
    return [e for e in b.transcript.entries() if e.kind == "msg" and e.topic == topic]


@pytest.mark.parametrize("per_yield, yields", [(1, 8), (4, 2), (8, 1)])
def test_starts_share_returns_to_the_reactor(tmp_path, per_yield, yields):
    module = tmp_path / f"batched{per_yield}.py"
    module.write_text(BATCHED.format(path=module_path("fifo"), n=per_yield))
    b = MockBroker(Machine.uniform(8, 1))
    Referee.attach(b)
    b.load(str(module), ["queue-depth=unlimited"])
    jobs = [b.jobs.submit(make_jobspec(duration=60), runtime=30) for _ in range(8)]
    b.run_until_quiet()
    assert all(b.jobs.job(j).state == "RUN" for j in jobs)
    # One return to the reactor after every per_yield-th start of the 8.
    assert b.stats()["sched_yields"] == yields
    b.run()
    b.observer.assert_clean()


@pytest.mark.parametrize("per_yield", [1, 4, 8])
def test_consecutive_starts_share_a_commit_of_R_up_to_eight(tmp_path, per_yield):
    # However many starts a step makes, the R of jobs started in a row go
    # to the KVS together, eight at most; the pass's end commits the rest.
    module = tmp_path / f"batched{per_yield}.py"
    module.write_text(BATCHED.format(path=module_path("fifo"), n=per_yield))
    b = MockBroker(Machine.uniform(12, 1))
    Referee.attach(b)  # SUCCESS only once R is in the KVS, and that R
    b.load(str(module), ["queue-depth=unlimited"])
    jobs = [b.jobs.submit(make_jobspec(duration=60), runtime=30) for _ in range(12)]
    b.run_until_quiet()
    commits = _messages(b, "kvs.commit")
    assert len(commits) == 2 == b.stats()["r_commits"]
    sizes = []
    for commit in commits:
        keys = [op["key"] for op in json.loads(commit.text)["ops"]]
        assert all(k.endswith(".R") for k in keys)
        sizes.append(len(keys))
    assert sizes == [8, 4]
    # Each SUCCESS follows the commit response that stored its R.
    done = [e.seq for e in _messages(b, "kvs.commit (response)")]
    successes = [
        e
        for e in _messages(b, "sched.alloc (response)")
        if json.loads(e.text)["type"] == 0
    ]
    assert len(successes) == 12
    for i, success in enumerate(successes):
        assert success.seq > done[i // 8]
        # The KVS holds the very R the SUCCESS carries (one encoding, two uses).
        answer = json.loads(success.text)
        assert b.kvs.lookup(r_key(answer["id"])) == answer["R"]
        assert answer["R"]["execution"]["R_lite"]
    assert all(b.jobs.job(j).state == "RUN" for j in jobs)
    b.run()
    b.observer.assert_clean()


def test_a_failed_commit_of_R_stops_the_module_without_a_success(monkeypatch):
    b = MockBroker(Machine.uniform(2, 1))
    b.load(module_path("fifo"))

    def refuse(payload):
        raise KVSError(errno.ENOSPC, "no space left")

    monkeypatch.setattr(b.kvs, "commit", refuse)
    b.jobs.submit(make_jobspec(duration=60), runtime=30)
    b.run_until_quiet()
    assert _messages(b, "kvs.commit")
    assert not [
        e
        for e in _messages(b, "sched.alloc (response)")
        if json.loads(e.text)["type"] == 0
    ]
    texts = [e.text for e in b.transcript.entries() if e.kind != "msg"]
    assert any("KVS commit failed" in t for t in texts), texts
    assert any(t.startswith("module exited") for t in texts), texts


@pytest.mark.parametrize(
    "depth, yields",
    [("queue-depth=8", 1), ("queue-depth=64", 1), ("queue-depth=65", 8), (None, 8)],
)
def test_conservative_starts_eight_a_step_only_behind_a_bounded_queue(depth, yields):
    b = MockBroker(Machine.uniform(8, 1))
    Referee.attach(b)
    b.load(module_path("conservative"), [depth] if depth else [])
    jobs = [b.jobs.submit(make_jobspec(duration=60), runtime=30) for _ in range(8)]
    b.run_until_quiet()
    assert all(b.jobs.job(j).state == "RUN" for j in jobs)
    assert b.stats()["sched_yields"] == yields
    assert len(_messages(b, "kvs.commit")) == 1 == b.stats()["r_commits"]
    b.run()
    b.observer.assert_clean()
