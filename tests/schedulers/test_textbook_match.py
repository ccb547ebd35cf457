"""Start times equal the textbook definitions, job for job.

On machines of identical single-core nodes, for whole-node jobs on any
machine, and for one-core-slot jobs (no node level) on any machine, every job replayed through the reference schedulers must start
exactly when the count-based model of the policies says
(:mod:`conformance.policy.textbook`, which shares no code with the
planner): on prefixes of the KTH-SP2 trace and on random workloads.
"""

from __future__ import annotations

from pathlib import Path
from unittest import mock

import pytest
from conftest import module_path, start_broker
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.policy import textbook
from conformance.referee import Referee
from mock_broker.jobspec import make_jobspec
from mock_broker.machine import Machine, NodeGroup
from replay.runner import replay
from replay.swf import read_swf

TRACES = Path(__file__).resolve().parents[2].parent / "shared" / "traces"
KTH = TRACES / "KTH-SP2-1996-2.1-cln.swf.gz"
CURIE = TRACES / "CEA-Curie-2011-2.1-cln-b2.swf.gz"


def model_starts(policy: str, total: int, jobs, depth=None) -> dict:
    """The textbook model's start of each job, by job key.

    *policy* ``hybrid`` is backfilling with reservation *depth*.
    """
    if policy != "hybrid":
        return textbook.simulate(policy, total, jobs)

    def starts(_policy, now, total, running, queue):
        return textbook.backfill_starts(now, total, running, queue, depth=depth)

    with mock.patch.object(textbook, "starts", starts):
        return textbook.simulate("backfill", total, jobs)


def module_and_args(policy: str, depth=None) -> tuple[str, list[str]]:
    if policy == "hybrid":
        return module_path("conservative"), [f"reservation-depth={depth}"]
    return module_path(policy), []


def mismatches(starts: dict, expected: dict) -> list:
    """``(key, start, expected)`` for every job whose start differs."""
    keys = sorted(set(starts) | set(expected))
    return [
        (k, starts.get(k), expected.get(k))
        for k in keys
        if starts.get(k) != expected.get(k)
    ]


# -- KTH-SP2 prefixes -------------------------------------------------------------

needs_kth = pytest.mark.skipif(
    not KTH.exists(),
    reason=f"the KTH-SP2 trace is not there ({KTH}): ../shared/traces is absent",
)


def replay_against_model(policy, skip, limit, depth=None, trace=KTH, machine=(100, 1)):
    """Replay *limit* jobs of *trace* after *skip* on *machine* (nodes,
    cores each; KTH's 100 single-core nodes by default), each job asking
    for one-core slots anywhere; return the jobs whose start differs from
    the model's."""
    trace = read_swf(trace, limit=limit, skip=skip)
    path, args = module_and_args(policy, depth)
    nodes, cores = machine
    _, broker = replay(
        path,
        trace.jobs,
        Machine.uniform(nodes, cores),
        args=["queue-depth=unlimited", *args],
        watch=Referee.attach,
    )
    broker.observer.assert_clean()
    records = [broker.jobs.job(jobid) for jobid in sorted(broker.jobs.jobs)]
    first = min(job.t_submit for job in records)
    starts = {
        k: job.t_run - first for k, job in enumerate(records) if job.t_run is not None
    }
    t0 = trace.jobs[0].submit
    jobs = [
        textbook.WorkloadJob(k, j.submit - t0, j.procs, j.requested_time, j.run)
        for k, j in enumerate(trace.jobs)
    ]
    assert len(starts) == len(jobs)
    return mismatches(starts, model_starts(policy, nodes * cores, jobs, depth))


@needs_kth
@pytest.mark.parametrize("policy", ["fifo", "easy", "conservative"])
def test_kth_prefix_starts_equal_the_model(policy):
    assert replay_against_model(policy, 0, 1500)[:5] == []


@needs_kth
@pytest.mark.parametrize("policy", ["easy", "conservative"])
def test_kth_busy_stretch_starts_equal_the_model(policy):
    # Jobs 12,000-13,000 build long queues behind wide jobs.
    assert replay_against_model(policy, 12000, 1000)[:5] == []


@needs_kth
def test_kth_hybrid_depth_starts_equal_the_model():
    assert replay_against_model("hybrid", 0, 1000, depth=4)[:5] == []


@pytest.mark.skipif(
    not CURIE.exists(),
    reason=f"the CEA-Curie trace is not there ({CURIE}): ../shared/traces is absent",
)
@pytest.mark.parametrize("policy", ["fifo", "easy", "conservative"])
def test_curie_prefix_starts_equal_the_model(policy):
    # 5,832 nodes of 16 cores (the thin nodes).  Jobs 724 to 726 (15,488
    # cores each) run for no time and start at one instant: their ends
    # once came part way through the passes that started them.
    assert replay_against_model(policy, 0, 800, trace=CURIE, machine=(5832, 16)) == []


# -- random workloads ----------------------------------------------------------------


def run_workload(policy, machine, jobs, spec, depth=None):
    """Submit *jobs* (``(submit, nodes, limit, runtime)``) at their times;
    return each job's start, relative to the broker's epoch."""
    _, args = module_and_args(policy, depth)
    b = start_broker(
        "conservative" if policy == "hybrid" else policy, args, machine=machine
    )
    ids = {}
    for k, (submit, nodes, limit, runtime) in enumerate(jobs):

        def submit_job(k=k, nodes=nodes, limit=limit, runtime=runtime):
            ids[k] = b.jobs.submit(spec(nodes, limit), runtime=runtime)

        b.at(b.clock.epoch + submit, submit_job)
    b.run()
    b.observer.assert_clean()
    out = {}
    for k, jobid in ids.items():
        job = b.jobs.job(jobid)
        if job.t_run is not None:
            out[k] = job.t_run - b.clock.epoch
    return out


def workload(max_nodes: int):
    """Dense workloads: queues form, so reservations and backfills matter."""
    job = st.tuples(
        st.integers(0, 20).map(lambda n: 10.0 * n),  # submit (ties allowed)
        st.integers(1, max_nodes),
        st.integers(1, 8).map(lambda n: 10.0 * n),  # time limit
        # runtime / limit; 0: a job that ends as it starts (real traces
        # have them), its free coming at the instant of its start
        st.sampled_from([1.0, 1.0, 0.5, 0.25, 0.9, 0.0]),
    ).map(lambda j: (j[0], j[1], j[2], j[2] * j[3]))
    return st.lists(job, min_size=12, max_size=28)


def expected(policy, total, jobs, depth=None):
    model_jobs = [
        textbook.WorkloadJob(k, submit, nodes, limit, runtime)
        for k, (submit, nodes, limit, runtime) in enumerate(jobs)
    ]
    return model_starts(policy, total, model_jobs, depth)


_few = settings(
    max_examples=30,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)

POLICIES = [
    ("fifo", None),
    ("easy", None),
    ("conservative", None),
    ("hybrid", 2),
]


def single_cores(nodes, limit):
    return make_jobspec(slots=nodes, cores=1, duration=limit)


@pytest.mark.parametrize("policy, depth", POLICIES)
@_few
@given(st.integers(5, 12).flatmap(lambda n: st.tuples(st.just(n), workload(n))))
def test_single_core_nodes_random_workloads(policy, depth, case):
    total, jobs = case
    starts = run_workload(policy, Machine.uniform(total, 1), jobs, single_cores, depth)
    assert mismatches(starts, expected(policy, total, jobs, depth)) == []


def whole_four_core_nodes(nodes, limit):
    return make_jobspec(nodes=nodes, slots=nodes, cores=4, duration=limit)


@pytest.mark.parametrize("policy, depth", POLICIES[1:3])
@_few
@given(workload(6))
def test_whole_nodes_on_multicore_nodes_random_workloads(policy, depth, jobs):
    machine = Machine.uniform(6, 4)
    starts = run_workload(policy, machine, jobs, whole_four_core_nodes, depth)
    assert mismatches(starts, expected(policy, 6, jobs, depth)) == []


def exclusive_nodes(nodes, limit):
    return make_jobspec(
        nodes=nodes, slots=nodes, cores=1, duration=limit, exclusive=True
    )


@pytest.mark.parametrize("policy, depth", POLICIES[1:3])
@_few
@given(workload(7))
def test_exclusive_nodes_on_a_mixed_machine_random_workloads(policy, depth, jobs):
    # Nodes of 2, 4 and 8 cores, two with GPUs: an exclusive job takes
    # whole nodes of any kind, so only node counts matter.
    machine = Machine(
        (NodeGroup(3, 2), NodeGroup(2, 4, gpus=2), NodeGroup(2, 8, properties=("big",)))
    )
    starts = run_workload(policy, machine, jobs, exclusive_nodes, depth)
    assert mismatches(starts, expected(policy, 7, jobs, depth)) == []


@pytest.mark.parametrize("policy, depth", POLICIES)
@_few
@given(workload(18))
def test_one_core_slots_on_multicore_nodes_random_workloads(policy, depth, jobs):
    # Nodes of 2, 4 and 8 cores: one-core slots with no node level take
    # free cores wherever they are, so only core counts matter (18 cores).
    machine = Machine((NodeGroup(1, 2), NodeGroup(2, 4), NodeGroup(1, 8)))
    starts = run_workload(policy, machine, jobs, single_cores, depth)
    assert mismatches(starts, expected(policy, 18, jobs, depth)) == []


def test_tie_order_matches_the_model():
    # At one instant ends come first, then arrivals, then the decision: a
    # job ending at 100 frees its nodes for a job submitted at 100, and the
    # head's reservation sees both.
    jobs = [
        (0.0, 3, 100.0, 100.0),
        (0.0, 2, 50.0, 50.0),
        (50.0, 4, 30.0, 30.0),
        (100.0, 1, 200.0, 200.0),
        (100.0, 2, 20.0, 20.0),
    ]
    for policy, depth in POLICIES:
        starts = run_workload(policy, Machine.uniform(4, 1), jobs, single_cores, depth)
        assert mismatches(starts, expected(policy, 4, jobs, depth)) == [], policy


@pytest.mark.parametrize("policy, depth", POLICIES)
def test_a_job_that_runs_for_no_time_ends_after_the_decision(policy, depth):
    # Job 6 starts at 140 and ends there: in the definitions the decision
    # at 140 is whole (job 11 backfills around job 9's reservation), and
    # the room job 6 leaves is decided on after it.
    jobs = [(0.0, 1, 10.0, 10.0)] * 5 + [
        (0.0, 6, 60.0, 60.0),
        (10.0, 8, 10.0, 0.0),
        (0.0, 5, 40.0, 40.0),
        (0.0, 6, 30.0, 30.0),
        (10.0, 7, 10.0, 10.0),
        (70.0, 3, 80.0, 80.0),
        (140.0, 1, 10.0, 10.0),
    ]
    starts = run_workload(policy, Machine.uniform(10, 1), jobs, single_cores, depth)
    assert mismatches(starts, expected(policy, 10, jobs, depth)) == []


def few_requests_workload():
    """Long queues of few distinct requests (sizes 1-3, two limits):
    the backfill scan of a depth-limited pass walks them by group."""
    job = st.tuples(
        st.integers(0, 12).map(lambda n: 5.0 * n),  # submit (ties allowed)
        st.integers(1, 3),
        st.sampled_from([20.0, 40.0]),  # time limit
        st.sampled_from([1.0, 0.5, 0.25]),  # runtime / limit
    ).map(lambda j: (j[0], j[1], j[2], j[2] * j[3]))
    return st.lists(job, min_size=30, max_size=60)


@pytest.mark.parametrize("policy, depth", [("easy", None), ("hybrid", 2)])
@_few
@given(few_requests_workload())
def test_long_queues_of_few_requests_random_workloads(policy, depth, jobs):
    starts = run_workload(policy, Machine.uniform(5, 1), jobs, single_cores, depth)
    assert mismatches(starts, expected(policy, 5, jobs, depth)) == []
