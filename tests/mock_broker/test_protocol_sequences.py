"""RFC 27 sequences as flux-core 0.88's job-manager plays them: limited
mode and withdrawal, partial frees from housekeeping, scheduler restart
with the hello replay."""

from __future__ import annotations

from mock_broker_helpers import (
    SEED,
    allocated,
    elapsed,
    messages,
    notes,
    ranks,
    sched,
    whole_nodes,
)

from mock_broker.machine import Machine
from mock_broker.runtime.clock import EPOCH

# -- limited mode -----------------------------------------------------------------


def limited_setup(make_broker, depth=2):
    """A 2-node machine filled by job A for 100 s, then B, C, D (one node
    each) queued behind it, with the scheduler limited to *depth* requests."""
    b = make_broker(Machine.uniform(2, 4))
    b.load(SEED, [f"queue-depth={depth}"])
    a = b.jobs.submit(whole_nodes(2), runtime=100)
    b.run_for(1.0)
    mark = len(b.transcript)
    bcd = [b.jobs.submit(whole_nodes(1), runtime=10) for _ in range(3)]
    b.run_for(1.0)
    return b, a, bcd, mark


def test_limited_mode_sends_at_most_the_limit(make_broker):
    b, a, (jb, jc, jd), mark = limited_setup(make_broker)
    ready = messages(b, "job-manager.sched-ready")
    assert ready[0]["payload"] == {"mode": "limited", "limit": 2}
    assert [m["payload"]["id"] for m in messages(b, "sched.alloc", mark)] == [jb, jc]
    assert b.jobs.job(jd).alloc_queued and not b.jobs.job(jd).alloc_pending


def test_higher_priority_arrival_withdraws_the_lowest_request(make_broker):
    b, a, (jb, jc, jd), _ = limited_setup(make_broker)
    mark = len(b.transcript)
    je = b.jobs.submit(whole_nodes(1), urgency=20, runtime=10)
    b.run_for(1.0)
    sched_msgs = [
        (m["topic"], m["payload"])
        for m in messages(b, start=mark)
        if m["topic"].startswith("sched.")
    ]
    assert sched_msgs[0] == ("sched.cancel", {"id": jc})
    assert sched_msgs[1] == ("sched.alloc (response)", {"id": jc, "type": 3})
    # the withdrawn request counted against the limit until its CANCEL came
    assert sched_msgs[2][0] == "sched.alloc" and sched_msgs[2][1]["id"] == je
    assert sched_msgs[2][1]["priority"] == 20
    assert len(sched_msgs) == 3
    c = b.jobs.job(jc)
    assert (c.state, c.alloc_pending, c.alloc_queued) == ("SCHED", False, True)
    assert b.jobs.job(jb).alloc_pending and b.jobs.job(je).alloc_pending

    mark = len(b.transcript)
    b.run()
    # A ends at 100: E (priority 20) and B start; then C, withdrawn earlier,
    # gets a fresh sched.alloc with the same id, and D; both start at 110
    again = [m["payload"]["id"] for m in messages(b, "sched.alloc", mark)]
    assert again == [jc, jd]
    starts = {j: elapsed(b, b.jobs.job(j).t_run) for j in (a, jb, jc, jd, je)}
    assert starts == {a: 0.0, je: 100.0, jb: 100.0, jc: 110.0, jd: 110.0}
    assert all(b.jobs.job(j).state == "INACTIVE" for j in starts)
    assert b.observer.violations == []


def test_priority_change_withdraws_the_lowest_request(make_broker):
    b, a, (jb, jc, jd), _ = limited_setup(make_broker)
    mark = len(b.transcript)
    b.jobs.set_urgency(jd, 25)
    b.run_for(1.0)
    topics = [(m["topic"], m["payload"]) for m in messages(b, start=mark)]
    assert topics[0] == ("sched.cancel", {"id": jc})
    assert topics[1] == ("sched.alloc (response)", {"id": jc, "type": 3})
    assert topics[2][0] == "sched.alloc" and topics[2][1]["id"] == jd
    assert topics[2][1]["priority"] == 25
    b.run()
    assert elapsed(b, b.jobs.job(jd).t_run) == 100.0
    assert elapsed(b, b.jobs.job(jc).t_run) == 110.0
    assert b.observer.violations == []


def test_second_cancel_for_the_same_request_is_ignored(make_broker):
    b, a, (jb, jc, jd), _ = limited_setup(make_broker)
    mark = len(b.transcript)
    # two arrivals that outrank C before C's CANCEL can come back
    je = b.jobs.submit(whole_nodes(1), urgency=20, runtime=10)
    jf = b.jobs.submit(whole_nodes(1), urgency=20, runtime=10)
    b.run_for(1.0)
    seq = [(m["topic"], m["payload"]["id"]) for m in messages(b, start=mark)]
    # E outranks C; then F outranks C (still outstanding: its CANCEL has
    # not arrived) and B.  The scheduler answers C's two cancels once.
    assert seq == [
        ("sched.cancel", jc),
        ("sched.cancel", jc),
        ("sched.cancel", jb),
        ("sched.alloc (response)", jc),
        ("sched.alloc (response)", jb),
        ("sched.alloc", je),
        ("sched.alloc", jf),
    ]
    b.run()
    assert [elapsed(b, b.jobs.job(j).t_run) for j in (je, jf, jb, jc, jd)] == [
        100.0,
        100.0,
        110.0,
        110.0,
        120.0,
    ]
    assert b.observer.violations == []


def test_unlimited_mode_sends_every_request(make_broker):
    b = make_broker(Machine.uniform(1, 4))
    b.load(SEED)
    ids = [b.jobs.submit(whole_nodes(1), runtime=10) for _ in range(5)]
    b.run_for(1.0)
    assert messages(b, "job-manager.sched-ready")[0]["payload"] == {"mode": "unlimited"}
    assert [m["payload"]["id"] for m in messages(b, "sched.alloc")] == ids
    b.run()
    assert [elapsed(b, b.jobs.job(j).t_run) for j in ids] == [0, 10, 20, 30, 40]


# -- partial release (housekeeping release-after) ---------------------------------


def test_partial_frees_come_rank_by_rank(make_broker):
    b = make_broker(Machine.uniform(4, 4), release_after=5.0)
    b.load(SEED)
    jid = b.jobs.submit(whole_nodes(4), runtime=100)
    b.run_for(1.0)
    assert allocated(b) == [0, 1, 2, 3]
    mark = len(b.transcript)
    seen = []
    for t in (100.0, 105.0, 110.0, 115.0):
        b.run_until(EPOCH + t)
        seen.append(allocated(b))
    assert seen == [[1, 2, 3], [2, 3], [3], []]
    frees = messages(b, "sched.free", mark)
    assert [m["t"] for m in frees] == [100.0, 105.0, 110.0, 115.0]
    assert [m["payload"]["id"] for m in frees] == [jid] * 4
    assert [ranks(m["payload"]["R"]) for m in frees] == [[0], [1], [2], [3]]
    assert [m["payload"]["final"] for m in frees] == [False, False, False, True]
    # sched.free has no response
    assert messages(b, "sched.free (response)") == []
    job = b.jobs.job(jid)
    assert job.state == "INACTIVE" and not job.has_resources
    assert elapsed(b, job.t_end) == 100.0
    assert b.observer.violations == []


def test_freed_ranks_are_used_as_soon_as_they_come_back(make_broker):
    b = make_broker(Machine.uniform(2, 4), release_after=5.0)
    b.load(SEED)
    first = b.jobs.submit(whole_nodes(2), runtime=20)
    second = b.jobs.submit(whole_nodes(1), runtime=20)
    third = b.jobs.submit(whole_nodes(1), runtime=20)
    b.run()
    # rank 0 is back at 20, rank 1 at 25
    assert elapsed(b, b.jobs.job(second).t_run) == 20.0
    assert elapsed(b, b.jobs.job(third).t_run) == 25.0
    assert ranks(b.jobs.job(second).R) == [0]
    assert ranks(b.jobs.job(third).R) == [1]
    assert b.jobs.job(first).result == "completed"
    assert b.observer.violations == []


def test_single_rank_job_frees_at_once_even_with_release_after(make_broker):
    b = make_broker(Machine.uniform(2, 4), release_after=5.0)
    b.load(SEED)
    jid = b.jobs.submit(whole_nodes(1), runtime=20)
    b.run()
    frees = messages(b, "sched.free")
    assert [(m["t"], m["payload"]["final"]) for m in frees] == [(20.0, True)]
    assert frees[0]["payload"]["id"] == jid


# -- scheduler restart ------------------------------------------------------------


def two_running_one_partly_freed(make_broker):
    """A (ranks 0-1, ends at 50) and B (ranks 2-3, ends at 100); at t=52
    housekeeping has released A's rank 0 and will release rank 1 at 55."""
    b = make_broker(Machine.uniform(4, 4), release_after=5.0)
    b.load(SEED)
    a = b.jobs.submit(whole_nodes(2), runtime=50)
    bb = b.jobs.submit(whole_nodes(2), runtime=100)
    b.run_until(EPOCH + 52.0)
    assert ranks(b.jobs.job(a).R) == [0, 1] and ranks(b.jobs.job(bb).R) == [2, 3]
    assert allocated(b) == [1, 2, 3]
    return b, a, bb


def test_restart_replays_unreleased_ranks_in_hello(make_broker):
    b, a, bb = two_running_one_partly_freed(make_broker)
    mark = len(b.transcript)
    b.restart_scheduler()
    assert messages(b, "job-manager.sched-hello", mark)[0]["payload"] == {
        "partial-ok": True
    }
    hello = messages(b, "job-manager.sched-hello (response)", mark)
    assert [m["payload"] for m in hello] == [
        {"id": bb, "priority": 16, "userid": 1000, "t_submit": EPOCH},
        {"id": a, "priority": 16, "userid": 1000, "t_submit": EPOCH, "free": "0"},
        None,
    ]
    assert hello[-1]["errnum"] == 61  # ENODATA ends the stream
    # the new scheduler holds exactly the ranks not yet released
    assert allocated(b) == [1, 2, 3]
    mark = len(b.transcript)
    b.run_until(EPOCH + 55.0)
    frees = messages(b, "sched.free", mark)
    assert [
        (m["payload"]["id"], ranks(m["payload"]["R"]), m["payload"]["final"])
        for m in frees
    ] == [(a, [1], True)]
    assert allocated(b) == [2, 3]
    b.run()
    assert allocated(b) == []
    assert b.observer.violations == []


def test_restart_without_partial_ok_terminates_housekeeping(make_broker):
    b, a, bb = two_running_one_partly_freed(make_broker)
    b.unload()
    mark = len(b.transcript)
    b.load(sched("no_partial.py"))
    assert messages(b, "job-manager.sched-hello", mark)[0]["payload"] == {
        "partial-ok": False
    }
    hello = messages(b, "job-manager.sched-hello (response)", mark)
    assert [m["payload"] for m in hello] == [
        {"id": bb, "priority": 16, "userid": 1000, "t_submit": EPOCH},
        None,
    ]
    f58 = b.jobs.job(a).f58
    assert (
        f"housekeeping of {f58} terminated: scheduler does not support restart "
        "with partially released resources"
    ) in notes(b, mark)
    assert not b.jobs.job(a).has_resources
    assert allocated(b) == [2, 3]  # rank 1 is back without a sched.free
    mark = len(b.transcript)
    b.run()
    frees = messages(b, "sched.free", mark)
    assert {m["payload"]["id"] for m in frees} == {bb}
    assert b.observer.violations == []


def test_restart_requeues_pending_jobs_and_resends_them(make_broker):
    b = make_broker(Machine.uniform(1, 4))
    b.load(SEED, ["queue-depth=1"])
    running = b.jobs.submit(whole_nodes(1), runtime=30)
    pending = b.jobs.submit(whole_nodes(1), runtime=30)
    b.run_for(10.0)
    assert b.jobs.job(pending).alloc_pending
    mark = len(b.transcript)
    b.restart_scheduler()
    assert "scheduler interface stopped: disconnect" in notes(b, mark)
    b.run_for(1.0)
    assert [m["payload"]["id"] for m in messages(b, "sched.alloc", mark)] == [pending]
    assert [
        m["payload"]["id"]
        for m in messages(b, "job-manager.sched-hello (response)", mark)[:-1]
    ] == [running]
    b.run()
    assert elapsed(b, b.jobs.job(pending).t_run) == 30.0
    assert b.observer.violations == []


def test_jobs_running_before_the_scheduler_loads(make_broker):
    machine = Machine.uniform(2, 4)
    b = make_broker(machine)
    R = {
        "version": 1,
        "execution": {
            "R_lite": [{"rank": "1", "children": {"core": "0-3"}}],
            "nodelist": ["node1"],
            "starttime": EPOCH,
            "expiration": 0.0,
        },
    }
    old = b.jobs.add_running(R, whole_nodes(1), runtime=40)
    b.load(SEED)
    assert allocated(b) == [1]
    new = b.jobs.submit(whole_nodes(2), runtime=10)
    b.run()
    assert elapsed(b, b.jobs.job(old).t_end) == 40.0
    assert elapsed(b, b.jobs.job(new).t_run) == 40.0
    assert b.observer.violations == []
