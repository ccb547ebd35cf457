"""RFC 27 annotations: the merge rules (unit tests of
mock_broker.jobmanager.annotations) and how the job-manager model applies and clears
them for a scheduler that annotates."""

from __future__ import annotations

from mock_broker_helpers import messages, sched, whole_nodes

from mock_broker.jobmanager.annotations import merge_annotations
from mock_broker.machine import Machine

# -- the merge rules ----------------------------------------------------------------


def test_merge_into_nothing():
    assert merge_annotations(None, {"sched": {"queue": "batch"}}) == {
        "sched": {"queue": "batch"}
    }


def test_merge_is_recursive():
    current = {"sched": {"queue": "batch"}, "user": {"n": 1}}
    update = {"sched": {"t_estimate": 100.0}}
    assert merge_annotations(current, update) == {
        "sched": {"queue": "batch", "t_estimate": 100.0},
        "user": {"n": 1},
    }


def test_merge_replaces_values():
    assert merge_annotations({"a": 1, "b": [1, 2]}, {"b": [3]}) == {"a": 1, "b": [3]}
    assert merge_annotations({"a": {"b": 1}}, {"a": 5}) == {"a": 5}
    assert merge_annotations({"a": 5}, {"a": {"b": 1}}) == {"a": {"b": 1}}


def test_null_deletes_a_key():
    current = {"sched": {"reason_pending": "busy", "t_estimate": 5.0}}
    assert merge_annotations(current, {"sched": {"t_estimate": None}}) == {
        "sched": {"reason_pending": "busy"}
    }
    assert merge_annotations({"a": 1, "b": 2}, {"a": None}) == {"b": 2}


def test_null_for_an_absent_key_is_harmless():
    assert merge_annotations({"a": 1}, {"zzz": None}) == {"a": 1}
    assert merge_annotations(None, {"zzz": None}) is None


def test_object_emptied_by_deletions_disappears():
    current = {"sched": {"reason_pending": "busy"}, "user": {"n": 1}}
    assert merge_annotations(current, {"sched": {"reason_pending": None}}) == {
        "user": {"n": 1}
    }


def test_nested_empty_objects_disappear_up_the_tree():
    current = {"a": {"b": {"c": 1}}}
    assert merge_annotations(current, {"a": {"b": {"c": None}}}) is None


def test_empty_result_is_none():
    assert merge_annotations({"a": 1}, {"a": None}) is None
    assert merge_annotations(None, {"a": {}}) is None
    assert merge_annotations(None, {}) is None


def test_merged_values_are_copies():
    update = {"sched": {"list": [1, 2]}}
    result = merge_annotations(None, update)
    update["sched"]["list"].append(3)
    assert result == {"sched": {"list": [1, 2]}}


# -- the job-manager with an annotating scheduler -----------------------------------

PENDING = {
    "sched": {"reason_pending": "insufficient resources", "jobs_ahead": 0},
    "user": {"seen_by": "annotate_keys"},
}


def one_node_busy(make_broker, args=()):
    """One node, taken for 100 s by job A; job B waits behind it."""
    b = make_broker(Machine.uniform(1, 4))
    b.load(sched("annotate_keys.py"), list(args))
    a = b.jobs.submit(whole_nodes(1), runtime=100)
    b.run_for(1.0)
    jb = b.jobs.submit(whole_nodes(1), runtime=10)
    b.run_for(1.0)
    return b, a, jb


def test_annotate_merges_into_the_pending_job(make_broker):
    b, a, jb = one_node_busy(make_broker)
    assert b.jobs.job(jb).annotations == PENDING
    annotate = [
        m["payload"]
        for m in messages(b, "sched.alloc (response)")
        if m["payload"]["type"] == 1
    ]
    assert annotate == [{"id": jb, "type": 1, "annotations": PENDING}]


def test_success_clears_the_pending_sched_keys(make_broker):
    b, a, jb = one_node_busy(make_broker)
    b.run()
    success = [
        m["payload"]
        for m in messages(b, "sched.alloc (response)")
        if m["payload"]["id"] == jb and m["payload"]["type"] == 0
    ]
    # AllocRequest.success(clear=True) sends nulls for the keys it annotated
    assert success[0]["annotations"] == {
        "sched": {
            "reason_pending": None,
            "jobs_ahead": None,
            "resource_summary": "rank0/core[0-3]",
        }
    }
    assert b.jobs.job(jb).annotations == {
        "sched": {"resource_summary": "rank0/core[0-3]"},
        "user": {"seen_by": "annotate_keys"},
    }
    assert b.jobs.job(a).annotations == {
        "sched": {"resource_summary": "rank0/core[0-3]"}
    }
    assert b.observer.violations == []


def test_user_cancel_clears_everything(make_broker):
    b, a, jb = one_node_busy(make_broker)
    b.jobs.cancel(jb)
    assert b.jobs.job(jb).annotations is None
    assert b.jobs.job(jb).state == "INACTIVE"
    b.run()
    assert b.jobs.job(jb).annotations is None
    assert b.observer.violations == []


def test_deny_clears_everything(make_broker):
    b = make_broker(Machine.uniform(2, 4))
    b.load(sched("annotate_keys.py"))
    b.jobs.submit(whole_nodes(1), runtime=100)
    jb = b.jobs.submit(whole_nodes(2), runtime=10)
    b.run_for(1.0)
    assert b.jobs.job(jb).annotations == PENDING
    b.resources.shrink("1")  # B (two nodes) can never run now
    b.run_for(1.0)
    job = b.jobs.job(jb)
    assert (job.state, job.result) == ("INACTIVE", "denied")
    assert job.exceptions == [
        (
            "alloc",
            0,
            "unsatisfiable request: need 2 node(s) with 4 cores each, only 1 eligible",
        )
    ]
    assert job.annotations is None
    assert b.observer.violations == []


def test_withdrawal_cancel_clears_only_sched(make_broker):
    b, a, jb = one_node_busy(make_broker, ["queue-depth=1"])
    assert b.jobs.job(jb).annotations == PENDING
    jc = b.jobs.submit(whole_nodes(1), urgency=20, runtime=10)
    b.run_for(1.0)
    job = b.jobs.job(jb)
    assert job.state == "SCHED" and not job.alloc_pending  # withdrawn
    assert job.annotations == {"user": {"seen_by": "annotate_keys"}}
    assert b.jobs.job(jc).annotations == PENDING
    assert b.observer.violations == []


def test_requeue_on_disconnect_clears_only_sched(make_broker):
    b, a, jb = one_node_busy(make_broker)
    b.unload()
    assert b.jobs.job(jb).annotations == {"user": {"seen_by": "annotate_keys"}}
    assert b.jobs.job(jb).state == "SCHED" and not b.jobs.job(jb).alloc_pending
    # the running job keeps its annotations
    assert b.jobs.job(a).annotations == {
        "sched": {"resource_summary": "rank0/core[0-3]"}
    }
