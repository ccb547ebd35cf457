"""The referee's request, constraint, t_estimate, annotation and free checks.

``request_problems`` must accept everything flux-python's ``Rv1Pool``
allocates (checked over many seeded random machines, requests and pool
states) and reject an R that differs from the request in any one way.  The
other kinds are checked on a broker, with the gallery's single-fault
schedulers, for their text and the message they point at.
"""

from __future__ import annotations

import random
import textwrap
from pathlib import Path

import pytest
from flux.resource import InfeasibleRequest, InsufficientResources, ResourcePool
from flux.resource.Rv1Pool import ResourceRequest

from conformance.referee import (
    T_ESTIMATE_TOLERANCE,
    Referee,
    _rank_children,
    request_problems,
    t_estimate_problem,
)
from mock_broker.jobspec import make_jobspec
from mock_broker.machine import Machine, NodeGroup
from mock_broker.runtime.broker import MockBroker
from mock_broker.runtime.clock import EPOCH

GALLERY = Path(__file__).parent / "gallery"


def _random_machine(rng: random.Random) -> Machine:
    groups = tuple(
        NodeGroup(
            rng.randint(1, 3), rng.choice([1, 2, 4, 6, 8]), rng.choice([0, 0, 1, 2])
        )
        for _ in range(rng.randint(1, 2))
    )
    return Machine(groups)


def _random_jobspec(rng: random.Random) -> dict:
    cores = rng.choice([1, 1, 2, 3, 4])
    gpus = rng.choice([0, 0, 0, 1, 2])
    kind = rng.choice(["slots", "nodes", "range", "exclusive", "exclusive-slots"])
    if kind == "slots":
        return make_jobspec(slots=rng.randint(1, 6), cores=cores, gpus=gpus)
    if kind == "range":
        low = rng.randint(1, 2)
        return make_jobspec(
            nodes={"min": low, "max": low + rng.randint(0, 2)}, cores=cores, gpus=gpus
        )
    nodes = rng.randint(1, 3)
    if kind == "exclusive-slots":
        spec = make_jobspec(slots=nodes, cores=cores, gpus=gpus)
        spec["resources"][0]["exclusive"] = True
        return spec
    per_node = rng.randint(1, 3)
    return make_jobspec(
        nodes=nodes,
        slots=nodes * per_node,
        cores=cores,
        gpus=gpus,
        exclusive=kind == "exclusive" or None,
    )


def _allocate(pool, jobid, spec):
    try:
        return pool.alloc(jobid, ResourceRequest.from_jobspec(spec))
    except (InsufficientResources, InfeasibleRequest):
        return None


def test_everything_rv1pool_allocates_matches_its_request():
    rng = random.Random(20260101)
    checked = 0
    for _ in range(1500):
        machine = _random_machine(rng)
        pool = ResourcePool(machine.to_R())
        for jobid in range(1, rng.randint(2, 8)):
            spec = _random_jobspec(rng)
            alloc = _allocate(pool, jobid, spec)
            if alloc is None:
                continue
            children = _rank_children(alloc.to_dict())
            request = ResourceRequest.from_jobspec(spec)
            assert request_problems(request, children, machine) == [], (spec, children)
            checked += 1
            if rng.random() < 0.3:
                pool.free(jobid, alloc, final=True)
    assert checked > 1500


MACHINE = Machine.uniform(4, 8, 2)


def _problems(spec: dict, R_lite: list) -> list[str]:
    children = _rank_children({"execution": {"R_lite": R_lite}})
    return request_problems(ResourceRequest.from_jobspec(spec), children, MACHINE)


def _entry(rank, cores, gpus=None) -> dict:
    children = {"core": cores}
    if gpus:
        children["gpu"] = gpus
    return {"rank": rank, "children": children}


@pytest.mark.parametrize(
    "spec, R_lite, expected",
    [
        # exact matches
        (make_jobspec(nodes=2, slots=4, cores=3), [_entry("0-1", "0-5")], []),
        (
            make_jobspec(slots=5, cores=3),
            [_entry("0-1", "0-5"), _entry("2", "0-2")],
            [],
        ),
        (make_jobspec(slots=2, cores=1, gpus=1), [_entry("3", "0-1", "0-1")], []),
        (make_jobspec(nodes=1, exclusive=True), [_entry("2", "0-7", "0-1")], []),
        (make_jobspec(nodes={"min": 1, "max": 3}, cores=2), [_entry("0-2", "0-1")], []),
        # one core short on one node
        (
            make_jobspec(nodes=2, slots=4, cores=3),
            [_entry("0", "0-5"), _entry("1", "0-4")],
            ["rank 1: 5 cores are not a whole number of 3-core slots"],
        ),
        # a core too many: a whole slot more than asked for
        (
            make_jobspec(nodes=1, slots=2, cores=2),
            [_entry("0", "0-5")],
            ["rank 0: 3 slots where 2 per node were requested"],
        ),
        # a slot split over two ranks
        (
            make_jobspec(slots=2, cores=3),
            [_entry("0", "0-3"), _entry("1", "0-1")],
            [
                "rank 0: 4 cores are not a whole number",
                "rank 1: 2 cores are not a whole number",
            ],
        ),
        # total slots above the request
        (
            make_jobspec(slots=2, cores=2),
            [_entry("0-1", "0-3")],
            ["4 slots of 2 cores where 2 were requested"],
        ),
        # node count
        (
            make_jobspec(nodes=2, slots=2, cores=8),
            [_entry("0-2", "0-7")],
            ["3 nodes where 2 were requested"],
        ),
        (
            make_jobspec(nodes={"min": 2, "max": 3}, cores=1),
            [_entry("0", "0")],
            ["1 nodes where 2-3 were requested"],
        ),
        # GPUs missing, or given where none were asked for
        (
            make_jobspec(slots=2, cores=1, gpus=1),
            [_entry("0", "0-1", "0")],
            ["rank 0: 1 gpus for 2 slots of 1 gpus"],
        ),
        (
            make_jobspec(nodes=1, slots=1, cores=2),
            [_entry("0", "0-1", "0")],
            ["rank 0: 1 gpus, none requested"],
        ),
        # exclusive: the whole node, cores and GPUs
        (
            make_jobspec(nodes=1, slots=1, cores=1, exclusive=True),
            [_entry("0", "0")],
            ["rank 0: 1 of 8 cores and 0 of 2 gpus"],
        ),
        (
            make_jobspec(nodes=1, slots=1, cores=1, exclusive=True),
            [_entry("0", "0-7")],
            ["rank 0: 8 of 8 cores and 0 of 2 gpus"],
        ),
    ],
)
def test_request_problems(spec, R_lite, expected):
    problems = _problems(spec, R_lite)
    assert len(problems) == len(expected), problems
    for problem, want in zip(problems, expected, strict=True):
        assert problem.startswith(want), problems


def test_exclusive_slot_only_requests_mean_whole_nodes():
    spec = make_jobspec(slots=2, cores=1)
    spec["resources"][0]["exclusive"] = True
    assert _problems(spec, [_entry("0-1", "0-7", "0-1")]) == []
    assert _problems(spec, [_entry("0-1", "0")]) != []
    assert _problems(spec, [_entry("0", "0-7", "0-1")]) == [
        "1 nodes where 2 were requested"
    ]


def test_stepped_counts_take_only_their_values():
    spec = make_jobspec(nodes={"min": 1, "max": 4, "operator": "*", "operand": 2})
    assert _problems(spec, [_entry("0-1", "0")]) == []
    assert _problems(spec, [_entry("0-2", "0")])[0].startswith("3 nodes where one of")


@pytest.mark.parametrize(
    "value, problem",
    [
        (None, None),
        (EPOCH + 100, None),
        (EPOCH + 50 - T_ESTIMATE_TOLERANCE / 2, None),
        (EPOCH + 40, "is 1767225640.000, 10.000 s in the past"),
        (60, "is 60, which looks like a duration"),
        (60.5, "is 60.5, which looks like a duration"),
        ("soon", "is 'soon', not a number"),
        (True, "is True, not a number"),
        (float("inf"), "is inf, not a finite time"),
    ],
)
def test_t_estimate_problem(value, problem):
    got = t_estimate_problem(value, EPOCH + 50, EPOCH)
    if problem is None:
        assert got is None
    else:
        assert got is not None and got.startswith(problem)


# -- on a broker ----------------------------------------------------------------


@pytest.fixture
def broker():
    made = []

    def make(machine=None, target=None, args=()):
        b = MockBroker(machine or Machine.uniform(2, 4))
        Referee.attach(b)
        made.append(b)
        if target is not None:
            b.load(target, list(args))
        return b

    yield make
    for b in made:
        b.close()


def whole(n: int = 1, **kw) -> dict:
    return make_jobspec(nodes=n, slots=n, cores=4, **kw)


def marked(violation) -> str:
    (line,) = [ln for ln in violation.excerpt.splitlines() if ln.startswith(">>")]
    return line


def test_t_estimate_sent_as_a_duration(broker):
    b = broker(target=str(GALLERY / "annotations_t_estimate_absolute.py"))
    first = b.jobs.submit(whole(2), runtime=10)
    second = b.jobs.submit(whole(2), runtime=10)
    b.run()
    assert set(b.observer.kinds()) == {"t-estimate-not-absolute"}
    v = b.observer.violations[0]
    f58 = b.jobs.job(second).f58
    assert v.text == (
        f"{f58}: sched.t_estimate is 60, which looks like a duration, not an epoch time"
    )
    assert f'sched.alloc (response) {{"id":{second},"type":1' in marked(v)
    assert b.jobs.job(first).result == b.jobs.job(second).result == "completed"


def test_stale_annotation_is_reported_when_the_job_starts(broker):
    b = broker(target=str(GALLERY / "annotations_no_stale.py"))
    b.jobs.submit(whole(2), runtime=10)
    second = b.jobs.submit(whole(2), runtime=10)
    b.run()
    (v,) = b.observer.violations
    assert v.kind == "stale-annotation"
    assert v.text == (
        f"{b.jobs.job(second).f58}: started with sched.reason_pending still set "
        "(left over from while it was pending)"
    )
    assert v.time == 10.0
    assert f'sched.alloc (response) {{"id":{second},"type":0' in marked(v)


def test_correct_clearing_is_not_stale(broker):
    b = broker(target=str(GALLERY / "correct_fifo.py"))
    for _ in range(3):
        b.jobs.submit(whole(2), runtime=10)
    b.run()
    assert b.observer.violations == []


def test_constraint_violation_is_its_own_kind(broker):
    b = broker(
        machine=Machine((NodeGroup(1, 4), NodeGroup(1, 4, 0, ("fast",)))),
        target=str(GALLERY / "alloc_constraints_honoured.py"),
    )
    jid = b.jobs.submit(whole(1, constraints={"properties": ["fast"]}), runtime=10)
    b.run()
    (v,) = b.observer.violations
    assert v.kind == "R-violates-constraint"
    assert v.text == (
        f"{b.jobs.job(jid).f58}: ranks 0 do not satisfy the constraint "
        '{"properties": ["fast"]}'
    )
    assert f'sched.alloc (response) {{"id":{jid},"type":0' in marked(v)


def test_a_response_to_free_is_free_answered(broker):
    b = broker(target=str(GALLERY / "free_no_response.py"))
    jid = b.jobs.submit(whole(1), runtime=10)
    b.run()
    (v,) = b.observer.violations
    assert v.kind == "free-answered"
    assert v.text == "free_no_response responded to sched.free, which has no response"
    assert f'sched.free (response) {{"id":{jid}}}' in marked(v)


def test_a_response_to_another_noresponse_request_stays_generic(broker, tmp_path):
    path = tmp_path / "answers_prioritize.py"
    path.write_text(
        textwrap.dedent(
            f"""\
            import sys
            sys.path.insert(0, {str(GALLERY)!r})
            from flux.constants import FLUX_MSGTYPE_RESPONSE
            from flux.message import Message
            from _base import GalleryFifo

            class AnswersPrioritize(GalleryFifo):
                def prioritize(self, jobs):
                    super().prioritize(jobs)
                    msg = Message(FLUX_MSGTYPE_RESPONSE)
                    msg.topic = "sched.prioritize"
                    self.handle.send(msg)

            def mod_main(h, *args):
                AnswersPrioritize(h, *args).run()
            """
        )
    )
    b = broker(machine=Machine.uniform(1, 4), target=str(path))
    b.jobs.submit(whole(1), runtime=100)
    waiting = b.jobs.submit(whole(1), runtime=10)
    b.run_for(1)
    b.jobs.prioritize({waiting: 20})
    b.run()
    assert b.observer.kinds() == ["response-unknown-request"]


@pytest.mark.parametrize(
    "module, duration, kinds",
    [
        ("seed_minimal", 60.0, ["R-times-wrong"]),
        ("stamped_minimal", 60.0, []),
        ("stamped_minimal", "60", []),
        ("stamped_minimal", True, []),
    ],
)
def test_R_times_are_judged_against_a_readable_duration_only(
    broker, module, duration, kinds
):
    # The guide's loop never stamps R (expiration 0): wrong against a 60 s
    # limit.  The stamping one takes flux-python's reading of the duration
    # ("60" -> 60 s, true -> 1 s), as flux-core's own modules do; a
    # duration that is no number makes the jobspec malformed, which
    # robust.hostile-jobspecs judges, so R's times are not judged again.
    folder = Path(__file__).parents[1] / "mock_broker" / "schedulers"
    b = broker(target=str(folder / f"{module}.py"))
    spec = whole(1)
    spec["attributes"]["system"]["duration"] = duration
    jobid = b.jobs.submit(spec, runtime=0.5)
    b.run()
    assert b.jobs.job(jobid).result == "completed"
    assert b.observer.kinds() == kinds


@pytest.mark.parametrize(
    "duration, limit, unreadable",
    [
        (60, 60.0, False),
        (0, 0.0, False),
        ("60", 0.0, True),
        (True, 0.0, True),
        (-5, 0.0, True),
        (float("nan"), 0.0, True),
        (10**400, 0.0, True),  # no float holds it: read as infinite
    ],
)
def test_a_job_reads_its_duration_as_the_referee_needs(duration, limit, unreadable):
    from mock_broker.jobmanager.jobs import Job

    spec = whole(1)
    spec["attributes"]["system"]["duration"] = duration
    job = Job(1, spec, 1000, 16, 16, 0.0, 1.0)
    assert (job.duration, job.duration_unreadable) == (limit, unreadable)
    del spec["attributes"]["system"]["duration"]
    assert (job.duration, job.duration_unreadable) == (0.0, False)
