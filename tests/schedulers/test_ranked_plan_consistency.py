"""Plans on ranks stay consistent through everything a queue goes through.

GPU and core-level jobs on multi-core nodes (planned with the allocator),
with early ends, cancels and priority changes.  The tests' checks are on
(see ``conftest``): every window a scratch copy shows is compared with the
plan, every kept per-rank answer with a fresh one, every kept forecast with
one placed afresh; the referee watches the protocol.  A difference fails
the run.
"""

from __future__ import annotations

import random

import pytest
from conftest import start_broker

from mock_broker.jobspec import make_jobspec
from mock_broker.machine import Machine


@pytest.mark.parametrize(
    "policy, args",
    [
        ("fifo", []),
        ("easy", []),
        ("conservative", []),
        ("conservative", ["reservation-depth=4"]),
    ],
)
def test_plans_on_ranks_survive_early_ends_cancels_and_priority_changes(policy, args):
    rng = random.Random(7)
    b = start_broker(policy, args, machine=Machine.uniform(6, 8, 2))
    submitted: list[int] = []

    def submit(spec, duration):
        submitted.append(b.jobs.submit(spec, runtime=rng.uniform(1, duration)))

    for i in range(80):
        nodes = rng.choice([None, None, None, 1, 2])
        duration = rng.choice([50, 100, 300, 600])
        spec = make_jobspec(
            nodes=nodes,
            slots=nodes or 1,
            cores=rng.choice([1, 2, 3, 5, 8]),
            gpus=rng.choice([0, 0, 0, 1, 2]),
            duration=duration,
        )
        b.at(b.now + i * rng.uniform(0.5, 8), lambda s=spec, d=duration: submit(s, d))

    def disturb(k):
        waiting = [j for j in submitted if b.jobs.job(j).state == "SCHED"]
        if waiting:
            job = rng.choice(waiting)
            if k % 3 == 0:
                b.jobs.cancel(job)
            else:
                b.jobs.prioritize({job: rng.randint(1, 30)})

    for k in range(12):
        b.at(b.now + rng.uniform(10, 400), lambda k=k: disturb(k))
    b.run()
    states = [b.jobs.job(j).state for j in submitted]
    assert len(submitted) == 80 and set(states) == {"INACTIVE"}
    results = {b.jobs.job(j).result for j in submitted}
    assert "completed" in results and results <= {"completed", "canceled"}
    b.observer.assert_clean()
