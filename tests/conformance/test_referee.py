"""The referee against deliberately broken schedulers (schedulers/broken.py).

Each fault is reported with the right violation kind and an excerpt whose
marked line is the offending message; the minimal scheduler of flux-core's
guide *Writing a Python Scheduler* goes through every one of these sequences
without a violation.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from flux.job import JobID

from conformance.referee import RefereeError
from mock_broker.machine import Machine

# The broken test schedulers and their helpers live with the mock broker's tests.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mock_broker"))
from mock_broker_helpers import (  # noqa: E402
    SEED,
    elapsed,
    marked_line,
    messages,
    notes,
    ranks,
    sched,
    whole_nodes,
)

# -- the sequences ------------------------------------------------------------------


def three_jobs(make_broker, target, args=()):
    """Two nodes, three one-node jobs of 10 s."""
    b = make_broker(Machine.uniform(2, 4))
    b.load(target, list(args))
    ids = [b.jobs.submit(whole_nodes(1), runtime=10) for _ in range(3)]
    b.run()
    return b, ids


def one_running_then_two(make_broker, target):
    """Job 1 starts alone; jobs 2 and 3 arrive a second later."""
    b = make_broker(Machine.uniform(2, 4))
    b.load(target)
    ids = [b.jobs.submit(whole_nodes(1), runtime=10)]
    b.run_for(1.0)
    ids += [b.jobs.submit(whole_nodes(1), runtime=10) for _ in range(2)]
    b.run()
    return b, ids


def drained_rank(make_broker, target):
    """Rank 0 is drained before the job arrives."""
    b = make_broker(Machine.uniform(2, 4))
    b.load(target)
    b.resources.drain("0")
    b.run_for(1.0)
    ids = [b.jobs.submit(whole_nodes(1), runtime=10)]
    b.run()
    return b, ids


def two_node_job(make_broker, target):
    b = make_broker(Machine.uniform(2, 4))
    b.load(target)
    ids = [b.jobs.submit(whole_nodes(2), runtime=10)]
    b.run()
    return b, ids


def withdrawal(make_broker, target):
    """Limited to one request: A runs, B waits, C (urgency 20) arrives."""
    b = make_broker(Machine.uniform(1, 4))
    b.load(target, ["queue-depth=1"])
    ids = [b.jobs.submit(whole_nodes(1), runtime=100)]
    b.run_for(1.0)
    ids.append(b.jobs.submit(whole_nodes(1), runtime=10))
    b.run_for(1.0)
    ids.append(b.jobs.submit(whole_nodes(1), urgency=20, runtime=10))
    b.run()
    return b, ids


def blocked_job(make_broker, target):
    """One node: A runs for 100 s, B waits for it."""
    b = make_broker(Machine.uniform(1, 4))
    b.load(target)
    ids = [b.jobs.submit(whole_nodes(1), runtime=100)]
    b.run_for(1.0)
    ids.append(b.jobs.submit(whole_nodes(1), runtime=10))
    b.run()
    return b, ids


def user_cancel(make_broker, target):
    """One node: A runs, B waits and is cancelled by its user."""
    b = make_broker(Machine.uniform(1, 4))
    b.load(target)
    ids = [b.jobs.submit(whole_nodes(1), runtime=100)]
    b.run_for(1.0)
    ids.append(b.jobs.submit(whole_nodes(1), runtime=10))
    b.run_for(1.0)
    b.jobs.cancel(ids[1])
    b.run()
    return b, ids


def restart_with_drained_rank(make_broker, target):
    """Rank 0 drains under the first scheduler instance, which then is
    restarted; a job arrives for the second instance."""
    b = make_broker(Machine.uniform(2, 4))
    b.load(target)
    for _ in range(10):
        b.jobs.submit(whole_nodes(1), runtime=1)
    b.run()
    b.resources.drain("0")
    b.run_for(1.0)
    b.restart_scheduler()
    ids = [b.jobs.submit(whole_nodes(1), runtime=10)]
    b.run()
    return b, ids


SEQUENCES = [
    three_jobs,
    one_running_then_two,
    drained_rank,
    two_node_job,
    withdrawal,
    blocked_job,
    user_cancel,
    restart_with_drained_rank,
]


# -- the correct scheduler ------------------------------------------------------------


@pytest.mark.parametrize("sequence", SEQUENCES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("target", [SEED, sched("seed_generator.py")])
def test_correct_scheduler_has_no_violations(make_broker, sequence, target):
    b, ids = sequence(make_broker, target)
    assert b.observer.violations == []
    b.observer.assert_clean()
    assert all(b.jobs.job(j).state == "INACTIVE" for j in ids)
    assert b.jobs.allocated_ranks() == {}


def test_correct_scheduler_avoids_the_drained_rank(make_broker):
    for sequence in (drained_rank, restart_with_drained_rank):
        b, (jid,) = sequence(make_broker, SEED)
        assert ranks(b.jobs.job(jid).R) == [1]


# -- the broken ones ------------------------------------------------------------------


def broken(name):
    return sched(f"broken.py:{name}")


def broken_file() -> str:
    return sched("broken.py")


def line_of(cls: str, text: str) -> int:
    """The line number of the first *text* after ``class CLS`` in broken.py."""
    lines = Path(broken_file()).read_text().splitlines()
    start = lines.index(next(x for x in lines if x.startswith(f"class {cls}(")))
    return next(n for n, x in enumerate(lines[start:], start + 1) if text in x)


def only(b, kind):
    """The single violation of *kind*, checked to be the only kind found."""
    assert b.observer.kinds() == [kind], [str(v) for v in b.observer.violations]
    return b.observer.violations[0]


def test_answering_twice(make_broker):
    b, ids = three_jobs(make_broker, broken("AnswersTwice"))
    assert b.observer.kinds() == ["second-final-response"] * 3
    v = b.observer.violations[0]
    assert v.text == (
        f"{b.jobs.job(ids[0]).f58}: DENY for a request that was already "
        "answered (or never sent)"
    )
    line = marked_line(v)
    assert (
        f'sched.alloc (response) {{"id":{ids[0]},"type":2,"note":"second answer"}}'
        in line
    )
    # the first answer counted
    assert [b.jobs.job(j).result for j in ids] == ["denied"] * 3
    assert b.jobs.job(ids[0]).exceptions == [("alloc", 0, "first answer")]


def test_success_without_R(make_broker):
    b, (j1, j2, j3) = one_running_then_two(make_broker, broken("SecondSuccessWithoutR"))
    v = only(b, "success-without-R")
    assert v.text == f"{b.jobs.job(j2).f58}: SUCCESS carries no R"
    assert marked_line(v).endswith(f'sched.alloc (response) {{"id":{j2},"type":0}}')
    # the job-manager stops talking to the scheduler ...
    assert "scheduler interface stopped: SUCCESS without R (EPROTO)" in notes(b)
    assert not b.jobs.online
    # ... requeues every pending job, sends no request ...
    for j in (j2, j3):
        job = b.jobs.job(j)
        assert (job.state, job.alloc_pending, job.alloc_queued) == (
            "SCHED",
            False,
            True,
        )
    assert [m["payload"]["id"] for m in messages(b, "sched.alloc")] == [j1, j2, j3]
    # ... and holds back the free of the job that ended after the teardown
    first = b.jobs.job(j1)
    assert first.state == "INACTIVE" and elapsed(b, first.t_end) == 10.0
    assert first.free_pending
    assert messages(b, "sched.free") == []


def test_success_arriving_after_the_teardown_is_freed_at_once(make_broker):
    # Job 1's SUCCESS waits for its KVS commit; job 2's bad SUCCESS goes out
    # first and stops the interface.  Job 1 is requeued, so its SUCCESS is
    # for a job no longer pending: flux-core's alloc.c answers such a SUCCESS
    # with a direct final sched.free, interface up or not.
    b, (j1, j2, j3) = three_jobs(make_broker, broken("SecondSuccessWithoutR"))
    assert (
        only(b, "success-without-R").text
        == f"{b.jobs.job(j2).f58}: SUCCESS carries no R"
    )
    lines = b.transcript.lines()
    stop = next(i for i, ln in enumerate(lines) if "scheduler interface stopped" in ln)
    late = [
        ln
        for ln in lines[stop:]
        if f'sched.alloc (response) {{"id":{j1},"type":0,"R"' in ln
    ]
    assert len(late) == 1
    frees = messages(b, "sched.free")
    assert [(f["payload"]["id"], f["payload"]["final"]) for f in frees][:1] == [
        (j1, True)
    ]
    job = b.jobs.job(j1)
    assert (job.state, job.alloc_pending, job.has_resources) == ("SCHED", False, False)


def test_success_without_kvs_commit(make_broker):
    b, ids = three_jobs(make_broker, broken("SkipsKVSCommit"))
    assert b.observer.kinds() == ["success-without-kvs-R"] * 3
    v = b.observer.violations[0]
    key = f"job.0000.0000.0000.{ids[0]:04x}.R"
    assert v.text == (
        f"{b.jobs.job(ids[0]).f58}: SUCCESS before R was committed to the KVS ({key})"
    )
    assert f'sched.alloc (response) {{"id":{ids[0]},"type":0,"R":' in marked_line(v)
    assert messages(b, "kvs.commit") == []
    assert key not in b.kvs
    # flux-core takes R from the response: the job runs anyway
    assert [b.jobs.job(j).result for j in ids] == ["completed"] * 3


def test_overlapping_R(make_broker):
    b, (j1, j2, j3) = three_jobs(make_broker, broken("ReusesR"))
    v = b.observer.violations[0]
    assert v.kind == "R-overlap"
    assert v.text == f"{b.jobs.job(j2).f58}: R overlaps {b.jobs.job(j1).f58} on rank 0"
    line = marked_line(v)
    assert f'sched.alloc (response) {{"id":{j2},"type":0,"R":' in line
    assert '"R_lite":[{"rank":"0"' in line
    assert ranks(b.jobs.job(j1).R) == ranks(b.jobs.job(j2).R) == [0]
    # the scheduler's own pool then refuses the free of R it never allocated
    # to that job, and the module stops with an error
    assert b.observer.kinds() == ["R-overlap", "module-exited"]


def test_R_on_a_drained_rank(make_broker):
    b, (jid,) = drained_rank(make_broker, broken("IgnoresDown"))
    v = only(b, "R-down-resources")
    assert v.text == (
        f"{b.jobs.job(jid).f58}: R uses ranks 0 the scheduler was told are down"
    )
    line = marked_line(v)
    assert f'sched.alloc (response) {{"id":{jid},"type":0,"R":' in line
    assert '"R_lite":[{"rank":"0"' in line
    assert 'resource.acquire (response) {"down":"0"}' in v.excerpt


def test_R_on_a_rank_drained_before_a_restart(make_broker):
    # The second scheduler instance learns of the drain from its first
    # resource.acquire response; allocating the rank is still a violation.
    b, (jid,) = restart_with_drained_rank(make_broker, broken("IgnoresDown"))
    v = only(b, "R-down-resources")
    assert ranks(b.jobs.job(jid).R) == [0]
    assert f'sched.alloc (response) {{"id":{jid},"type":0,"R":' in marked_line(v)


def test_R_that_does_not_match_the_request(make_broker):
    b, (jid,) = two_node_job(make_broker, broken("OneNodeOnly"))
    v = only(b, "R-does-not-match-request")
    assert v.text == f"{b.jobs.job(jid).f58}: 1 nodes where 2 were requested"
    assert f'sched.alloc (response) {{"id":{jid},"type":0,"R":' in marked_line(v)


def test_never_answering_a_withdrawal(make_broker):
    b, (ja, jb, jc) = withdrawal(make_broker, broken("IgnoresCancel"))
    v = only(b, "unanswered-cancel")
    assert v.text == (
        f"{b.jobs.job(jb).f58}: sched.cancel was never answered and the "
        "scheduler is idle"
    )
    assert v.time == 2.0  # reported as soon as the scheduler went idle
    assert f'sched.cancel {{"id":{jb}}}' in v.excerpt
    # the request stayed outstanding: C got no alloc until B's SUCCESS at 100
    assert elapsed(b, b.jobs.job(jb).t_run) == 100.0
    assert elapsed(b, b.jobs.job(jc).t_run) == 110.0


def test_never_answering_a_user_cancel(make_broker):
    b, (ja, jb) = user_cancel(make_broker, broken("IgnoresCancel"))
    v = only(b, "unanswered-cancel")
    assert f'sched.cancel {{"id":{jb}}}' in v.excerpt
    assert b.jobs.job(jb).result == "canceled"


def test_cancel_nobody_asked_for(make_broker):
    b, (ja, jb) = blocked_job(make_broker, broken("CancelsUnasked"))
    v = only(b, "unrequested-cancel")
    assert v.text == (
        f"{b.jobs.job(jb).f58}: CANCEL response but no sched.cancel was sent"
    )
    assert marked_line(v).endswith(f'sched.alloc (response) {{"id":{jb},"type":3}}')
    # the job-manager treats it as a withdrawal: B is requeued and re-sent
    assert [m["payload"]["id"] for m in messages(b, "sched.alloc")] == [ja, jb, jb]
    assert elapsed(b, b.jobs.job(jb).t_run) == 100.0


def test_error_response_to_alloc(make_broker):
    b, ids = three_jobs(make_broker, broken("AnswersWithError"))
    assert b.observer.kinds()[0] == "error-response"
    assert set(b.observer.kinds()) == {"error-response"}
    v = b.observer.violations[0]
    assert v.text == "alloc response with error 12 (ENOMEM: out of memory)"
    assert "sched.alloc (response) errnum=12 (ENOMEM: out of memory)" in marked_line(v)
    assert "scheduler interface stopped: alloc response error" in notes(b)
    assert not b.jobs.online
    for j in ids:
        job = b.jobs.job(j)
        assert (job.state, job.alloc_pending, job.alloc_queued) == (
            "SCHED",
            False,
            True,
        )


def test_raising_in_schedule(make_broker):
    b = make_broker(Machine.uniform(1, 4))
    b.load(broken("RaisesInSchedule"))
    jid = b.jobs.submit(whole_nodes(1), runtime=10)
    b.run()
    v = only(b, "module-exited")
    # The scheduler's own file and line where it raised, not flux-python's.
    where = f"{broken_file()}:{line_of('RaisesInSchedule', 'raise RuntimeError')} in schedule"
    assert v.text == (
        "scheduler broken exited: RuntimeError: policy bug: queue is inconsistent "
        f"at {where}"
    )
    assert marked_line(v).endswith(
        "[event] broken: module exited: RuntimeError: policy bug: queue is "
        f"inconsistent at {where}"
    )
    assert f'sched.alloc {{"id":{jid},' in v.excerpt
    assert b.modules == {} and b.scheduler is None
    assert "sched" not in b.services and "feasibility" not in b.services
    assert "scheduler interface stopped: disconnect" in notes(b)
    job = b.jobs.job(jid)
    assert (job.state, job.alloc_pending, job.alloc_queued) == ("SCHED", False, True)

    # a working scheduler loaded in its place picks the job up
    b.load(SEED)
    b.run()
    assert b.jobs.job(jid).result == "completed"
    assert elapsed(b, b.jobs.job(jid).t_run) == 0.0
    assert b.observer.kinds() == ["module-exited"]


def test_orderly_unload_is_not_a_violation(make_broker):
    b = make_broker(Machine.uniform(1, 4))
    b.load(SEED)
    b.unload()
    assert b.modules == {}
    exits = [e for e in b.transcript.entries() if e.text == "module exited: ok"]
    assert [e.source for e in exits] == ["seed_minimal"]
    assert b.observer.violations == []


def test_assert_clean_lists_every_violation(make_broker):
    b, _ = three_jobs(make_broker, broken("AnswersTwice"))
    with pytest.raises(RefereeError) as info:
        b.observer.assert_clean()
    text = str(info.value)
    assert text.count("[second-final-response] at t=0.000") == 3
    assert text.count("transcript around #") == 3


@pytest.mark.parametrize(
    "fault, why",
    [
        ("nan-text", "the payload is not JSON flux-core reads (NaN is not JSON)"),
        (
            "huge-float-text",
            "the payload is not JSON flux-core reads (real number overflow)",
        ),
        (
            "huge-id",
            "the payload is not JSON flux-core reads (integer of 20 digits is too "
            "big (int64))",
        ),
        ("bool-id", "id is not an integer"),
        ("bool-type", "type is not an integer"),
        ("note-not-string", "note is not a string"),
        ("payload-list", "the payload is not a JSON object"),
    ],
)
def test_responses_jansson_refuses_are_malformed(make_broker, fault, why):
    """What flux-core's flux_msg_unpack() refuses ends the interface as a
    malformed response, though Python's json reads it: nothing of it is
    taken for a job (``"id": true`` is not job 1) or sent back in sched.free."""
    b = make_broker(Machine.uniform(2, 4))
    b.load(broken("SendsRaw"), [f"fault={fault}"])
    jid = b.jobs.submit(whole_nodes(1), runtime=10)
    b.run()
    assert [(v.kind, v.text) for v in b.observer.violations] == [
        ("malformed-response", f"unparsable alloc response: {why}")
    ]
    assert "sched.alloc (response)" in marked_line(b.observer.violations[0])
    assert "scheduler interface stopped: alloc response error" in notes(b)
    assert messages(b, "sched.free") == []
    job = b.jobs.job(jid)
    assert (job.state, job.alloc_pending, job.R) == ("SCHED", False, None)


def test_success_with_annotations_that_are_no_object_starts_the_job(make_broker):
    # flux-core logs them (EINVAL) and starts the job all the same
    b = make_broker(Machine.uniform(2, 4))
    b.load(broken("SendsRaw"), ["fault=annotations-list"])
    jid = b.jobs.submit(whole_nodes(1), runtime=10)
    b.run()
    assert b.observer.violations == []
    job = b.jobs.job(jid)
    assert (job.result, job.annotations) == ("completed", None)


@pytest.mark.parametrize(
    "fault, kind, text, teardown",
    [
        ("unknown-type", "unknown-response-type", "{f58}: alloc response type 7", True),
        (
            "unknown-job",
            "response-unknown-job",
            "alloc response for {other}, which is no job",
            False,
        ),
        ("no-id", "malformed-response", "unparsable alloc response: no id", True),
        (
            "empty-annotate",
            "annotate-without-annotations",
            "{f58}: ANNOTATE has no annotations",
            True,
        ),
        (
            "annotate-after-deny",
            "annotation-after-final",
            "{f58}: ANNOTATE after the request was finalized",
            False,
        ),
        (
            "missing-rank",
            "R-nonexistent-resources",
            "{f58}: R uses ranks 7 that do not exist",
            False,
        ),
        (
            "missing-core",
            "R-nonexistent-resources",
            "{f58}: R uses cores 9 on ranks 0, which no node has",
            False,
        ),
    ],
)
def test_malformed_responses(make_broker, fault, kind, text, teardown):
    b = make_broker(Machine.uniform(2, 4))
    b.load(broken("SendsRaw"), [f"fault={fault}"])
    jid = b.jobs.submit(whole_nodes(1), runtime=10)
    b.run()
    v = b.observer.violations[0]
    assert v.kind == kind
    other = JobID(jid + 1000).f58  # the id SendsRaw makes up
    assert v.text == text.format(f58=b.jobs.job(jid).f58, other=other)
    assert "sched.alloc (response)" in marked_line(v)
    stopped = [n for n in notes(b) if "scheduler interface stopped" in n]
    assert bool(stopped) == teardown


@pytest.fixture
def no_big_expansion(monkeypatch):
    """Fail whatever expands an idset of more than a million ids (an R can
    name 2**31 ranks in a dozen characters: minutes and gigabytes)."""
    from flux.idset import IDset

    real_iter, real_expand = IDset.__iter__, IDset.expand

    def check(ids):
        if len(ids) > 10**6:
            raise AssertionError(f"expanded an idset of {len(ids)} ids")

    monkeypatch.setattr(IDset, "__iter__", lambda s: check(s) or real_iter(s))
    monkeypatch.setattr(IDset, "expand", lambda s: check(s) or real_expand(s))


@pytest.mark.parametrize(
    "fault, kind, text",
    [
        (
            "huge-rank",
            "R-nonexistent-resources",
            "{f58}: R uses ranks 2-1215752191 that do not exist",
        ),
        (
            "huge-core",
            "R-nonexistent-resources",
            "{f58}: R uses cores 4-2000000000 on ranks 0, which no node has",
        ),
        (
            "huge-gpu",
            "R-nonexistent-resources",
            "{f58}: R uses gpus 0-2000000000 on ranks 0, which no node has",
        ),
        (
            "negative-rank",
            "R-does-not-match-request",
            "{f58}: R unreadable: IDset(): Invalid argument: -1 (cannot parse '-1')",
        ),
        (
            "entry-not-object",
            "R-does-not-match-request",
            "{f58}: R unreadable: an R_lite entry is a number, not an object",
        ),
        (
            "children-list",
            "R-does-not-match-request",
            "{f58}: R unreadable: rank 0: children is not an object",
        ),
    ],
)
def test_R_the_kit_cannot_expand_or_read(
    make_broker, no_big_expansion, fault, kind, text
):
    """Ranks, cores and GPUs beyond the machine are found on the parsed
    ranges, an unreadable R is judged, and either way the job-manager runs
    the job, frees R in one final sched.free and the scheduler carries on."""
    b = make_broker(Machine.uniform(2, 4))
    b.load(broken("SendsRaw"), [f"fault={fault}"])
    jid = b.jobs.submit(whole_nodes(1), runtime=10)
    b.run_for(1.0)
    assert [(v.kind, v.text) for v in b.observer.violations] == [
        (kind, text.format(f58=b.jobs.job(jid).f58))
    ]
    assert b.jobs.job(jid).state == "RUN"
    assert set(b.jobs.allocated_ranks()) <= {0, 1}
    # A scenario's rank check compares the ranges, and says what it found.
    from conformance.scenarios.checks import _ranks

    assert _ranks(b.jobs.job(jid), [1], 0.0).endswith(", expected 1")
    b.run_for(20.0)
    frees = [
        (f["payload"]["id"], f["payload"]["final"]) for f in messages(b, "sched.free")
    ]
    assert frees == [(jid, True)]
    assert b.jobs.job(jid).state == "INACTIVE"


@pytest.mark.parametrize(
    "fault, answered", [("bool-id", False), ("annotations-list", True)]
)
def test_the_policy_suite_reads_responses_as_the_job_manager_does(
    make_broker, fault, answered
):
    """The policy suite reads alloc responses back from the transcript:
    ``"id": true`` is not job 1 (the first job's id is 1: its request ends
    only when the job-manager, which cannot read the response either,
    stops the interface and takes it back), and annotations that are no
    object are skipped, not a crash of the probe."""
    from conformance.policy.textbook import WorkloadJob
    from conformance.probes import policy

    b = make_broker(Machine.uniform(2, 4))
    b.load(broken("SendsRaw"), [f"fault={fault}"])
    jid = b.jobs.submit(whole_nodes(1), runtime=10)
    b.run()
    assert jid == 1
    [rec] = policy._records(b, {jid: WorkloadJob("a", 0.0, 1, 10.0, 10.0)})
    assert (rec.success_seq is not None) == answered
    assert rec.requests == [(0.0, 0.0)]
