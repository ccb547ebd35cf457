"""Runs are reproducible to the byte: the same scenario in fresh brokers
gives the same transcript, in this process and in others with different
hash seeds (payload keys sorted where flux-python's own request objects
order them by hash; the reference schedulers' payloads exactly as sent)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mock_broker_helpers import sched, whole_nodes

from conformance.referee import Referee
from mock_broker.jobspec import make_jobspec
from mock_broker.machine import Machine
from mock_broker.runtime.broker import MockBroker
from mock_broker.runtime.clock import EPOCH

HERE = Path(__file__).parent
ROOT = HERE.parent.parent


def scenario(seed: int = 0) -> MockBroker:
    """Many kinds of event at once: limited mode and withdrawal, partial
    frees, annotations, cancel, hold, prioritize, drain, expiration,
    a restart, randomness and time read by the scheduler."""
    b = MockBroker(Machine.uniform(4, 4), seed=seed, release_after=3.0)
    Referee.attach(b)
    try:
        b.load(sched("annotate_keys.py"), ["queue-depth=3"])
        ids = [b.jobs.submit(whole_nodes(2), runtime=40) for _ in range(2)]
        ids += [b.jobs.submit(whole_nodes(1), runtime=25) for _ in range(4)]
        b.run_for(5.0)
        ids.append(b.jobs.submit(whole_nodes(1), urgency=24, runtime=10))
        ids.append(b.jobs.submit(make_jobspec(slots=3, cores=2), runtime=15))
        b.run_for(5.0)
        b.jobs.cancel(ids[3])
        b.jobs.set_urgency(ids[4], 0)
        b.jobs.prioritize({ids[2]: 18, ids[5]: 22, ids[7]: 3})
        b.resources.drain("3")
        b.jobs.update_expiration(ids[0], EPOCH + 35.0)
        b.run_until(EPOCH + 42.0)
        b.restart_scheduler()
        b.jobs.set_urgency(ids[4], 16)
        b.resources.undrain("3")
        b.run()
        b.unload()
        b.load(sched("clock_probe.py"))
        for _ in range(3):
            b.jobs.submit(whole_nodes(1), runtime=7)
        b.run()
        return b
    finally:
        b.close()


def reference_scenario() -> MockBroker:
    """schedkit-conservative on a queue that waits: jobs get a
    ``t_estimate`` and a ``reason_pending``, which their SUCCESS nulls."""
    b = MockBroker(Machine.uniform(2, 4))
    Referee.attach(b)
    try:
        path = ROOT / "schedulers" / "conservative" / "schedkit-conservative.py"
        b.load(str(path), ["queue-depth=unlimited"])
        for i in range(8):
            b.jobs.submit(
                make_jobspec(slots=1, cores=2 + i % 3, duration=100.0),
                runtime=10 + 7 * i,
            )
        b.run()
        return b
    finally:
        b.close()


def digest(b: MockBroker, texts: bool = False) -> str:
    """Hash of the transcript's JSON lines (payload keys sorted), and with
    *texts* of the payloads as sent (keys in the order sent)."""
    data = b.transcript.to_jsonl()
    if texts:
        data += "\n".join(e.text for e in b.transcript.entries())
    return hashlib.sha256(data.encode()).hexdigest()


def test_scenario_is_rich_and_clean():
    b = scenario()
    topics = {e.topic for e in b.transcript.entries() if e.kind == "msg"}
    for topic in (
        "sched.alloc",
        "sched.cancel",
        "sched.free",
        "sched.prioritize",
        "sched.expiration",
        "resource.acquire (response)",
        "job-manager.sched-hello (response)",
    ):
        assert topic in topics
    assert all(j.state == "INACTIVE" for j in b.jobs.jobs.values())
    assert b.observer.violations == []


def test_same_scenario_twice_gives_identical_transcripts():
    first, second = scenario(), scenario()
    assert len(first.transcript) > 150
    assert first.transcript.to_jsonl() == second.transcript.to_jsonl()
    assert first.transcript.lines() == second.transcript.lines()
    assert first.logs == second.logs


def test_seed_changes_only_the_random_draws():
    a, b = scenario(seed=1), scenario(seed=2)
    assert a.transcript.to_jsonl() != b.transcript.to_jsonl()
    differing = [
        (x.text, y.text)
        for x, y in zip(a.transcript.entries(), b.transcript.entries(), strict=True)
        if x != y
    ]
    assert differing and all("random=" in x for x, _ in differing)


# flux-python's own AllocRequest nulls the keys a job was annotated with
# in its SUCCESS in the order of a set, which follows the hash seed; the
# reference schedulers' requests keep them in the order sent, so their
# payloads are the same to the byte.
@pytest.mark.parametrize(
    "name, texts", [("scenario", False), ("reference_scenario", True)]
)
def test_identical_across_processes_and_hash_seeds(name, texts):
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import mock_broker.runtime.broker;"
        f"import test_determinism as t; print(t.digest(t.{name}(), {texts}))"
    )
    digests = set()
    for hashseed in ("1", "2", "3", "4"):
        env = dict(os.environ, PYTHONHASHSEED=hashseed)
        out = subprocess.run(
            [sys.executable, "-c", code, str(HERE)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        digests.add(out.stdout.strip())
    digests.add(digest(globals()[name](), texts))
    assert len(digests) == 1
