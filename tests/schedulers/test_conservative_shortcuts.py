"""Unlimited conservative: the pass's shortcuts change nothing it decides.

A holder is not searched for when too few nodes are free before its start
or the plan has got lighter nowhere before its reservation's end since its
last turn (``_Lightening``), and a holder that is searched for keeps its
reservation held while it looks for an earlier start
(``CountedPlanning._keeps``).  All of it must be invisible: the same workload, with passes
cut short by arrivals in the middle, run once as shipped and once with
every holder searched for afresh (released first, as the definition
reads), must send the same estimates and start every job at the same time.
"""

from __future__ import annotations

from unittest import mock

from conftest import estimate_history, start_broker, whole_nodes
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flux_sched_base import counted
from flux_sched_base.scheduler import PlanningScheduler

#: (nodes, limit in tens of seconds, fraction of the limit it runs,
#:  urgency, arrival in seconds, reactor steps before it arrives)
jobs = st.lists(
    st.tuples(
        st.integers(1, 4),
        st.integers(1, 12),
        st.sampled_from([0.2, 0.5, 1.0]),
        st.sampled_from([16, 16, 16, 24]),
        st.integers(0, 60),
        st.integers(0, 6),
    ),
    min_size=2,
    max_size=14,
)


def run(workload):
    b = start_broker("conservative")
    ids = []
    epoch = b.clock.epoch
    for nodes, tens, fraction, urgency, arrival, steps in sorted(
        workload, key=lambda j: j[4]
    ):
        if epoch + arrival > b.now:
            b.run_until(epoch + arrival)
        # Let the pass in progress (if any) take a few steps, then arrive
        # in the middle of it: the job-manager's alloc cuts the pass short.
        with b.clock.active():
            for _ in range(steps):
                if not b._step():
                    break
        ids.append(
            b.jobs.submit(
                whole_nodes(nodes, 10.0 * tens),
                runtime=10.0 * tens * fraction,
                urgency=urgency,
            )
        )
    b.run()
    starts = {j: b.jobs.job(j).t_run for j in ids}
    estimates = estimate_history(b)
    b.observer.assert_clean()
    return starts, estimates


@settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(jobs)
def test_shortcuts_decide_what_a_full_search_decides(workload):
    # Every turn yields once in both runs (a kept holder yields only now and
    # then as shipped), so an arrival after N steps cuts both passes at the
    # same job.
    with mock.patch.object(PlanningScheduler, "CHEAP_YIELD_EVERY", 1):
        shipped = run(workload)
        with mock.patch.object(
            counted.CountedPlanning, "_keeps", lambda *a: (False, None)
        ):
            full = run(workload)
    assert shipped == full
