"""When a run is over: ``run_until_settled`` lets a module's quiet timers
be (a periodic stats line), waits out the ones that still do work, and
names the module whose timers keep sending; ``run`` stays strict."""

from __future__ import annotations

from pathlib import Path

import pytest
from mock_broker_helpers import messages, sched, whole_nodes

from mock_broker.machine import Machine
from mock_broker.runtime.broker import (
    BrokerLivelock,
    BrokerStalled,
    BrokerUnsettled,
)

#: The conformance gallery's pass that waits in itself for room.
WAITING_PASS = (
    Path(__file__).parents[1] / "conformance" / "gallery" / "livelock_yielding_pass.py"
)


def stats_lines(b) -> list[float]:
    return [when for when, _name, _level, text in b.logs if text.startswith("stats:")]


@pytest.mark.parametrize("cls", ["PeriodicStats", "UnrefStats"])
def test_a_timer_that_only_logs_lets_the_run_settle(make_broker, cls):
    b = make_broker(Machine.uniform(1, 4))
    b.load(sched(f"periodic.py:{cls}"))
    jid = b.jobs.submit(whole_nodes(1), runtime=100)
    b.run_until_settled()
    assert b.jobs.job(jid).state == "INACTIVE"
    # The job ended at 100; the timer fired at 60 and, once after, at 120
    # (an unreferenced one too: in a module the dispatcher keeps the
    # reactor running, so it fires as any other).
    assert stats_lines(b) == [60.0, 120.0]
    assert b.elapsed == 120.0


def test_run_stays_strict_about_a_repeating_timer(make_broker):
    b = make_broker(Machine.uniform(1, 4))
    b.load(sched("periodic.py:PeriodicStats"))
    with pytest.raises(BrokerStalled, match="still busy after 1000 virtual seconds"):
        b.run(limit=1000)  # not a multiple of the period: 960 is the last firing
    assert b.elapsed == 1000.0


def test_the_wait_covers_every_timer_armed_and_starts_again_after_a_send(
    make_broker,
):
    b = make_broker(Machine.uniform(1, 4))
    b.load(sched("periodic.py:LateLookup"))
    b.run_until_settled()
    # The one-shot timer at 500 was waited for (the stats line at 60 fired
    # quietly, but was not the last timer armed); its lookup started the
    # wait again, which the next stats line ended.
    assert [m["t"] for m in messages(b, "kvs.lookup")] == [500.0]
    assert b.elapsed == 540.0


def _settling(make_broker, module, runtime, error, **limits):
    """A job of *runtime* under *module*, run until settled: the broker and
    the *error* that ended the wait."""
    b = make_broker(Machine.uniform(1, 4))
    b.load(sched(module))
    b.jobs.submit(whole_nodes(1), runtime=runtime)
    with pytest.raises(error) as caught:
        b.run_until_settled(**limits)
    return b, caught.value


def test_a_module_whose_timers_keep_sending_is_named_with_its_line(make_broker):
    b, exc = _settling(
        make_broker, "periodic.py:PollingStats", 30, BrokerUnsettled, limit=600
    )
    source = sched("periodic.py")
    line = 1 + next(
        i
        for i, text in enumerate(Path(source).read_text().splitlines())
        if text.strip().endswith("# the poll")
    )
    assert (exc.module, exc.sent, exc.since) == ("periodic", "kvs.lookup request", 30.0)
    assert exc.where == f"{source}:{line} in tick"
    assert exc.times == 10  # every firing from 60 to 600
    assert str(exc).startswith(
        "periodic never let the instance settle: from t=30.000, when the "
        "instance's own work was done, to t=600.000, its timers sent the "
        f"broker messages 10 times (the last: kvs.lookup request from {source}:"
    )
    assert b.elapsed == 600.0


def test_a_module_that_polls_for_ever_is_named_after_a_thousand_rounds(
    make_broker,
):
    # Without the round cap a poll a minute would run for the whole limit
    # (ten years of virtual time: five million polls) before being named.
    b, exc = _settling(make_broker, "periodic.py:PollingStats", 30, BrokerUnsettled)
    assert exc.times == 1000 and exc.since == 30.0
    assert b.elapsed == 60_000.0  # the thousandth poll, not the limit
    assert "to t=60000.000, its timers sent the broker messages 1000 times" in str(exc)


def test_the_instance_own_work_past_the_limit_is_not_the_module_fault(
    make_broker,
):
    _, exc = _settling(
        make_broker, "periodic.py:PeriodicStats", 10_000, BrokerStalled, limit=1000
    )
    assert not isinstance(exc, BrokerUnsettled)
    assert str(exc) == "still busy after 1000 virtual seconds"


def test_a_livelock_at_one_instant_still_trips_the_iterations_budget(make_broker):
    # The gallery's pass that yields and tries again while the head does
    # not fit: settling never hides it.
    b = make_broker(Machine.uniform(1, 4))
    b.max_iterations_per_instant = 500
    b.load(str(WAITING_PASS))
    b.jobs.submit(whole_nodes(1), runtime=30)
    b.jobs.submit(whole_nodes(1), runtime=30)
    with pytest.raises(BrokerLivelock, match="500 reactor iterations"):
        b.run_until_settled()
    assert b.elapsed == 0.0
