"""Annotation bookkeeping: send only changes, clear what is stale."""

from __future__ import annotations

from flux_sched_base.annotations import Annotations, success_annotations


class FakeRequest:
    def __init__(self):
        self.sent = []

    def annotate(self, annotations):
        self.sent.append(annotations)


class FakeJob:
    def __init__(self, jobid):
        self.jobid = jobid
        self.request = FakeRequest()


def test_only_changes_are_sent():
    book, job = Annotations(), FakeJob(1)
    assert book.update(job, t_estimate=10.0, reason_pending="r")
    assert not book.update(job, t_estimate=10.0, reason_pending="r")
    assert book.update(job, t_estimate=12.0, reason_pending="r")
    assert job.request.sent == [
        {"sched": {"t_estimate": 10.0, "reason_pending": "r"}},
        {"sched": {"t_estimate": 12.0}},
    ]
    assert book.updates == 2


def test_clearing_sends_null_once_and_never_for_unset_keys():
    book, job = Annotations(), FakeJob(1)
    assert not book.update(job, t_estimate=None)
    book.update(job, t_estimate=10.0)
    assert book.clear(job)
    assert not book.clear(job)
    assert job.request.sent[-1] == {"sched": {"t_estimate": None}}
    assert book.annotated() == []


def test_forget_and_get():
    book, job = Annotations(), FakeJob(7)
    book.update(job, reason_pending="x")
    assert book.get(7, "reason_pending") == "x"
    assert book.annotated() == [7]
    book.forget(7)
    assert book.get(7, "reason_pending") is None and len(book) == 0


def test_success_annotations():
    class R:
        def dumps(self):
            return "rank0/core0"

    assert success_annotations(R(), "backfilled") == {
        "sched": {"resource_summary": "rank0/core0", "selection_type": "backfilled"}
    }
