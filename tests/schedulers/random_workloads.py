"""Random workloads for comparing two ways of running a policy: a few
core-level, whole-node and one-core-slot requests on 4 x 4 cores,
arriving over time with two priorities, some killed at their limit with
housekeeping holding the node after."""

from __future__ import annotations

import random

from conftest import start_broker

from mock_broker.jobspec import make_jobspec
from mock_broker.machine import Machine

#: Core-level requests (the allocator plans them) and whole nodes and
#: one-core slots (planned with counts while the queue holds only those).
SHAPES = [
    {"slots": 1, "cores": 1},
    {"slots": 1, "cores": 3},
    {"slots": 2, "cores": 2},
    {"nodes": 1, "slots": 1, "cores": 4},
    {"nodes": 2, "slots": 2, "cores": 4},
    {"slots": 3, "cores": 1},
]


def workload(rng: random.Random) -> list[tuple]:
    """Four whole nodes' worth at once, then 12-30 jobs that queue behind
    it: ``(submit, shape, limit, runtime / limit, housekeeping, urgency)``;
    a runtime of twice the limit is killed at the limit, and housekeeping
    then frees the node a while after (the plan's end passes, no event)."""
    jobs = [
        (0.0, 3, 40.0, rng.choice([1.0, 0.5, 2.0]), rng.choice([0.0, 15.0]), 16)
        for _ in range(4)
    ]
    for _ in range(rng.randint(12, 30)):
        jobs.append(
            (
                3.7 * rng.randint(0, 60),  # off the runtimes' 5 s steps
                rng.choice([0, 1, 3, 4, 0, 5, 2]),  # the first four often
                rng.choice([20.0, 40.0]),
                rng.choice([1.0, 0.5, 0.25, 2.0]),
                rng.choice([0.0, 0.0, 15.0]),
                rng.choice([16, 16, 16, 20]),  # 20: ahead of the rest
            )
        )
    return jobs


def run_responses(
    policy: str, args: list[str], jobs, shapes: list = SHAPES
) -> tuple[list, dict]:
    """Run *jobs* (their shapes indexes into *shapes*) on 4 x 4 cores; the
    alloc responses in order (time and text: job ids are the same from run
    to run) and the scheduler's stats."""
    b = start_broker(policy, args, machine=Machine.uniform(4, 4))
    for submit, shape, limit, fraction, late, urgency in sorted(jobs):

        def submit_job(
            shape=shape, limit=limit, fraction=fraction, late=late, u=urgency
        ):
            b.jobs.submit(
                make_jobspec(duration=limit, **shapes[shape]),
                urgency=u,
                runtime=limit * fraction,
                release=[[late, [0, 1, 2, 3]]] if late else None,
            )

        b.at(b.clock.epoch + submit, submit_job)
    b.run()
    b.observer.assert_clean()
    responses = []
    for entry in b.transcript.entries():
        if entry.kind == "msg" and entry.topic == "sched.alloc (response)":
            responses.append((entry.time, entry.text))
    stats = b.stats()
    b.close()
    return responses, stats
