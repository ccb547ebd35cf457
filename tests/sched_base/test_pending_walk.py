"""``PlanningScheduler.pending_jobs``: every job still pending when the
walk reaches it comes once, in queue order, while the pass starts jobs
(removes them) under it, across the walk's chunks.  A pass removes only
the job it is at or one it has passed (an identical job ahead that takes
an allocation); an event that removes others closes the pass first."""

from __future__ import annotations

from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st
from sortedcontainers import SortedKeyList

from flux_sched_base.scheduler import PlanningScheduler, queue_order


def _queue(n: int) -> SimpleNamespace:
    jobs = [SimpleNamespace(jobid=100 + i, priority=16 + i % 3) for i in range(n)]
    owner = SimpleNamespace(
        _queue=SortedKeyList(jobs, key=queue_order),
        _pending={job.jobid: job for job in jobs},
    )
    return owner


def _finalize(owner, job) -> None:
    owner._queue.remove(job)
    del owner._pending[job.jobid]


@settings(max_examples=100, deadline=None, derandomize=True)
@given(
    n=st.integers(0, 70),
    chunk=st.sampled_from([1, 3, 8, 256]),
    started=st.sets(st.integers(0, 69)),
    passed=st.sets(st.integers(0, 69)),
)
def test_every_pending_job_comes_once_in_order(n, chunk, started, passed):
    owner = _queue(n)
    order = list(owner._queue)
    seen = []
    for position, job in enumerate(PlanningScheduler.pending_jobs(owner, chunk)):
        seen.append(job)
        if position in started:
            _finalize(owner, job)  # started by the pass
        if position in passed:
            # A job the walk passed, still waiting, starts (handed over).
            earlier = [j for j in owner._queue if queue_order(j) < queue_order(job)]
            if earlier:
                _finalize(owner, earlier[len(earlier) // 2])
    expected = [j for j in order if j in seen or j.jobid in owner._pending]
    assert seen == expected
    assert len({j.jobid for j in seen}) == len(seen)
