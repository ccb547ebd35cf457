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


def test_an_estimate_moving_earlier_by_less_than_the_slack_is_not_sent_again():
    book, job = Annotations(estimate_slack=1.0), FakeJob(1)
    assert book.update(job, t_estimate=100.0, reason_pending="r")
    assert not book.update(job, t_estimate=99.5, reason_pending="r")
    assert not book.update(job, t_estimate=99.01)  # 0.99 s before the one sent
    assert book.get(1, "t_estimate") == 100.0
    assert book.update(job, t_estimate=99.0)  # a whole second earlier
    assert book.update(job, t_estimate=99.001)  # later, however little
    assert book.update(job, t_estimate=98.5, reason_pending="s")  # reason only
    assert [m["sched"] for m in job.request.sent] == [
        {"t_estimate": 100.0, "reason_pending": "r"},
        {"t_estimate": 99.0},
        {"t_estimate": 99.001},
        {"reason_pending": "s"},
    ]
    assert book.estimate_stands(1, 98.5) and book.estimate_stands(1, 99.001)
    assert not book.estimate_stands(1, 99.002) and not book.estimate_stands(1, 98.0)
    assert not book.estimate_stands(2, 99.001)


def test_without_slack_every_change_of_estimate_is_sent():
    book, job = Annotations(estimate_slack=0.0), FakeJob(1)
    for value in (100.0, 99.99, 99.98, 99.98):
        book.update(job, t_estimate=value)
    assert [m["sched"]["t_estimate"] for m in job.request.sent] == [
        100.0,
        99.99,
        99.98,
    ]


def test_the_default_slack_is_read_when_the_book_is_made(monkeypatch):
    from flux_sched_base import annotations

    assert Annotations().estimate_slack == annotations.ESTIMATE_SLACK == 1.0
    monkeypatch.setattr(annotations, "ESTIMATE_SLACK", 0.0)
    assert Annotations().estimate_slack == 0.0


def test_an_estimate_moving_earlier_by_less_than_its_share_of_the_wait_stands():
    book, job = Annotations(estimate_slack=1.0, estimate_fraction=0.01), FakeJob(1)
    assert book.update(job, now=0.0, t_estimate=10_000.0)
    # 1% of the 9,950 s still ahead of 9,950 is 99.5 s: 50 s earlier stands
    assert not book.update(job, now=0.0, t_estimate=9_950.0)
    assert book.estimate_stands(1, 9_950.0, now=0.0)
    # without now only the slack in seconds counts
    assert not book.estimate_stands(1, 9_950.0)
    # near the start the share shrinks: 50 s ahead of 9,950 s, 0.5 s share
    assert not book.estimate_stands(1, 9_950.0, now=9_900.0)
    assert book.update(job, now=9_900.0, t_estimate=9_950.0)
    # later is always sent, whatever the share
    assert book.update(job, now=0.0, t_estimate=9_950.5)
    assert [m["sched"]["t_estimate"] for m in job.request.sent] == [
        10_000.0,
        9_950.0,
        9_950.5,
    ]


def test_with_no_slack_and_no_share_every_move_is_sent():
    book, job = Annotations(estimate_slack=0.0, estimate_fraction=0.0), FakeJob(1)
    for start in (100.0, 99.999, 99.998):
        assert book.update(job, now=0.0, t_estimate=start)
    assert len(job.request.sent) == 3


def test_standing_says_until_when_what_was_sent_stands_and_records_it():
    # What a pass asks of a holder kept as it was, in one look: the
    # estimate and reason sent stand for this start now, and until when;
    # standing by the share of the wait is recorded (fraction_until, the
    # earliest such time) as estimate_stands records it, and nothing stands
    # for another reason or a later start.
    book, job = Annotations(estimate_slack=1.0, estimate_fraction=0.01), FakeJob(1)
    book.update(job, now=0.0, t_estimate=10_000.0, reason_pending="r")
    assert book.standing(1, 10_000.0, 0.0, "r") == float("inf")
    assert book.standing(1, 9_999.5, 0.0, "r") == float("inf")  # the slack
    assert book.fraction_until == float("inf")
    # 50 s early stands while 1% of the wait to 9,950 s covers it: until
    # 4,950 s (a millisecond early)
    until = book.standing(1, 9_950.0, 0.0, "r")
    assert until == book.stands_until(1, 9_950.0, "r")
    assert 4_949.99 < until < 4_950.0
    assert book.fraction_until == until
    book.fraction_until = float("inf")
    assert book.estimate_stands(1, 9_950.0, now=4_949.0)
    assert book.fraction_until == until
    # 40 s early stands until 5,960 s: the earlier time is kept.
    assert book.estimate_stands(1, 9_960.0, now=0.0)
    assert book.fraction_until == until
    assert book.standing(1, 9_950.0, 6_000.0, "r") is None
    assert not book.estimate_stands(1, 9_950.0, now=6_000.0)
    assert book.standing(1, 10_000.5, 0.0, "r") is None  # later
    assert book.standing(1, 10_000.0, 0.0, "other") is None
    assert book.standing(2, 10_000.0, 0.0, "r") is None
    assert book.fraction_until == until


def test_an_estimate_equal_to_the_one_sent_stands_without_slack_or_share():
    book, job = Annotations(estimate_slack=0.0, estimate_fraction=0.0), FakeJob(1)
    book.update(job, now=0.0, t_estimate=100.0, reason_pending="r")
    assert book.stands_until(1, 100.0, "r") == float("inf")
    assert book.stands_until(1, 99.999, "r") == float("-inf")
