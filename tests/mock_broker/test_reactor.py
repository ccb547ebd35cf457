"""The virtual-time reactor: what scheduler code sees of time and
randomness, timers, watcher ordering, and the clock's jumps."""

from __future__ import annotations

import ast
import random
import re
import time
from pathlib import Path

import pytest
from mock_broker_helpers import (
    SCHEDULERS,
    SEED,
    elapsed,
    messages,
    sched,
    whole_nodes,
)

from mock_broker.machine import Machine
from mock_broker.runtime import clock as clock_module
from mock_broker.runtime.broker import BrokerLivelock, BrokerStalled
from mock_broker.runtime.clock import EPOCH, MONOTONIC_BASE

#: The conformance gallery's pass that waits in itself for room.
WAITING_PASS = (
    Path(__file__).parents[1] / "conformance" / "gallery" / "livelock_yielding_pass.py"
)

PROBE_LINE = re.compile(r"schedule time=(\S+) monotonic=(\S+) random=(\S+)")


def probe_records(b) -> list[tuple[float, float, float, float]]:
    """(elapsed, time.time(), time.monotonic(), random.random()) per schedule()."""
    out = []
    for when, name, _level, text in b.logs:
        m = PROBE_LINE.fullmatch(text)
        if m and name == "clock_probe":
            out.append((when, *(float(x) for x in m.groups())))
    return out


def run_probe(make_broker, seed=0, epoch=EPOCH):
    b = make_broker(Machine.uniform(1, 4), seed=seed, epoch=epoch)
    b.load(sched("clock_probe.py"))
    b.jobs.submit(whole_nodes(1), runtime=30)
    b.jobs.submit(whole_nodes(1), runtime=45)
    b.run()
    return b, probe_records(b)


# -- time as scheduler code sees it -------------------------------------------


def test_time_functions_inside_scheduler_follow_the_virtual_clock(make_broker):
    b, records = run_probe(make_broker)
    # schedule() runs when the jobs arrive (t=0) and when the first ends (t=30)
    assert [r[0] for r in records] == [0.0, 30.0]
    assert [r[1] for r in records] == [EPOCH, EPOCH + 30.0]
    assert [r[2] for r in records] == [MONOTONIC_BASE, MONOTONIC_BASE + 30.0]
    assert b.elapsed == 75.0 and b.now == EPOCH + 75.0


ALL_CLOCKS = f"""
import datetime
import sys
import time
from datetime import datetime as imported_datetime

sys.path.insert(0, {str(SCHEDULERS)!r})
from seed_minimal import SimpleScheduler


class AllClocks(SimpleScheduler):
    def schedule(self):
        now = datetime.datetime.now()
        self.log.info(repr((
            time.time_ns() / 1e9,
            time.clock_gettime(time.CLOCK_REALTIME),
            time.clock_gettime_ns(time.CLOCK_REALTIME) / 1e9,
            time.monotonic_ns() / 1e9,
            time.clock_gettime(time.CLOCK_MONOTONIC),
            datetime.datetime.now(datetime.timezone.utc).timestamp(),
            imported_datetime.now().timestamp(),
            datetime.datetime.utcnow().replace(tzinfo=datetime.timezone.utc).timestamp(),
            datetime.date.today().isoformat(),
            isinstance(now, imported_datetime),
        )))
        super().schedule()


def mod_main(h, *args):
    AllClocks(h, *args).run()
"""


def test_every_clock_a_module_reads_follows_the_virtual_clock(make_broker, tmp_path):
    # time.time_ns(), clock_gettime() and datetime.now() read the system
    # clock in C: a module stamping R with them must see the broker's time.
    path = tmp_path / "all_clocks.py"
    path.write_text(ALL_CLOCKS)
    b = make_broker(Machine.uniform(1, 4))
    b.load(str(path))
    b.jobs.submit(whole_nodes(1), runtime=30)
    b.jobs.submit(whole_nodes(1), runtime=45)
    b.run()
    logged = [text for _, name, _, text in b.logs if name == "all_clocks"]
    seen = [ast.literal_eval(text) for text in logged if text.startswith("(")]
    assert len(seen) == 2
    for values, at in zip(seen, (0.0, 30.0), strict=True):
        wall, mono = EPOCH + at, MONOTONIC_BASE + at
        assert values[:3] == (wall, wall, wall)
        assert values[3:5] == (mono, mono)
        assert values[5:8] == (wall, wall, wall)
        assert values[8] == "2026-01-01" and values[9] is True


def test_epoch_is_configurable(make_broker):
    b, records = run_probe(make_broker, epoch=1_000_000.0)
    assert [r[1] for r in records] == [1_000_000.0, 1_000_030.0]
    # monotonic time counts from the start of the broker, whatever the epoch
    assert [r[2] for r in records] == [MONOTONIC_BASE, MONOTONIC_BASE + 30.0]


def test_time_outside_the_broker_is_real(make_broker):
    b, _ = run_probe(make_broker)
    assert abs(time.time() - clock_module._real_time()) < 5.0
    assert abs(time.monotonic() - clock_module._real_monotonic()) < 5.0
    assert clock_module._active == []  # no broker clock is active now
    assert b.now == EPOCH + 75.0


def test_pool_stamps_virtual_time_into_R(make_broker):
    # Rv1Pool computes a job's end from time.time() + duration; the stamping
    # scheduler puts time.time() into R: both must be virtual.
    b = make_broker(Machine.uniform(1, 4))
    b.load(sched("expiring.py"))
    b.run_for(12.0)
    jid = b.jobs.submit(whole_nodes(1, duration=100), runtime=10)
    b.run()
    R = b.jobs.job(jid).R
    assert R["execution"]["starttime"] == EPOCH + 12.0
    assert R["execution"]["expiration"] == EPOCH + 112.0


# -- seeded randomness ----------------------------------------------------------


def test_random_is_seeded_per_broker(make_broker):
    _, first = run_probe(make_broker, seed=7)
    _, again = run_probe(make_broker, seed=7)
    _, other = run_probe(make_broker, seed=8)
    draws = [r[3] for r in first]
    assert len(draws) == 2 and draws[0] != draws[1]
    assert [r[3] for r in again] == draws
    assert [r[3] for r in other] != draws


def test_broker_random_is_seeded(make_broker):
    a = make_broker(seed=3).random.random()
    b = make_broker(seed=3).random.random()
    assert a == b == random.Random(3).random()


# -- timers ---------------------------------------------------------------------------


def test_one_shot_timers_and_reset(make_broker):
    b = make_broker()
    b.load(sched("watcher_probe.py:TimerProbe"))
    b.run()
    fired = b.rpc("watcher_probe.report")["fired"]
    assert fired == [
        ["b", 3.0],  # one-shot at 3
        ["r", 7.0],  # repeating every 7, stopped after its third firing
        ["r", 14.0],
        ["r", 21.0],
        ["a", 23.0],  # armed for 10, but reset(after=20) at t=3 re-armed it
        ["a", 28.0],  # a one-shot re-armed from its own callback
    ]
    assert b.elapsed == 28.0  # nothing armed after that: run() returns


def test_reactor_iteration_order(make_broker):
    b = make_broker()
    link = b.load(sched("watcher_probe.py:OrderProbe"))
    answers = []
    b.send_request(link, "watcher_probe.ping", {}, on_response=answers.append)
    b.run()
    assert len(answers) == 1
    order = b.rpc("watcher_probe.report")["order"]
    # documented in mock_broker/reactor.py: prepare, timers, messages,
    # future continuations, idle, check; then the next iteration
    assert order == [
        "prepare",
        "timer",
        "message",
        "continuation",
        "idle",
        "check",
        "prepare",
        "idle",
        "check",
    ]


def test_active_idle_watcher_holds_the_clock(make_broker):
    b = make_broker()
    b.load(sched("watcher_probe.py:IdleProbe"))
    b.run()
    report = b.rpc("watcher_probe.report")
    assert report["idle"] == [0.0] * 5  # five iterations, no time passed
    assert report["timer"] == 1.0  # then the clock jumps to the timer


def test_prepare_watchers_run_before_the_clock_moves(make_broker):
    # libev runs prepare watchers just before the loop blocks: one started
    # by a callback runs at that callback's time, not at the next event's,
    # and one always active runs once per wait, not again on waking up.
    b = make_broker()
    b.load(sched("watcher_probe.py:PrepareProbe"))
    b.run()  # returns: an active prepare watcher does not hold the clock
    report = b.rpc("watcher_probe.report")
    assert report["flushed"] == [5.0, 12.0]
    assert report["always"] == [0.0, 5.0, 12.0]


def test_generator_schedule_takes_one_reactor_iteration_per_yield(make_broker):
    b = make_broker(Machine.uniform(4, 4))
    b.load(sched("seed_generator.py"))
    ids = [b.jobs.submit(whole_nodes(1), runtime=10) for _ in range(4)]
    b.run_until_quiet()
    assert all(b.jobs.job(j).state == "RUN" for j in ids)
    stats = b.stats()
    assert stats["sched_yields"] == 4 and stats["sched_passes"] == 1
    b.run()
    assert [elapsed(b, b.jobs.job(j).t_end) for j in ids] == [10.0] * 4


# -- the clock jumps ------------------------------------------------------------------


def test_clock_jumps_straight_to_the_next_event(make_broker):
    b = make_broker(Machine.uniform(1, 4))
    b.load(SEED)
    jid = b.jobs.submit(whole_nodes(1), runtime=1_000_000.0)
    started = time.perf_counter()
    b.run()
    assert time.perf_counter() - started < 2.0
    assert b.elapsed == 1_000_000.0
    assert elapsed(b, b.jobs.job(jid).t_end) == 1_000_000.0
    # nothing happened in between: alloc at 0, free at 10^6
    times = [m["t"] for m in messages(b) if m["topic"].startswith("sched.")]
    assert times == [0.0, 0.0, 1_000_000.0]


def test_run_until_stops_exactly_there(make_broker):
    b = make_broker(Machine.uniform(1, 4))
    b.load(SEED)
    jid = b.jobs.submit(whole_nodes(1), runtime=100)
    b.run_until(EPOCH + 40.0)
    assert b.elapsed == 40.0 and b.jobs.job(jid).state == "RUN"
    b.run_for(60.0)
    assert b.elapsed == 100.0 and b.jobs.job(jid).state == "INACTIVE"
    b.run_for(5.0)  # nothing to do: the clock still moves to the end
    assert b.elapsed == 105.0


def test_run_until_condition(make_broker):
    b = make_broker(Machine.uniform(1, 4))
    b.load(SEED)
    first = b.jobs.submit(whole_nodes(1), runtime=30)
    second = b.jobs.submit(whole_nodes(1), runtime=30)
    assert b.run_until_condition(lambda: b.jobs.job(second).state == "RUN")
    assert b.elapsed == 30.0 and b.jobs.job(first).state == "INACTIVE"
    # the next event (the second job's end, t=60) lies past the timeout
    assert not b.run_until_condition(lambda: False, timeout=10.0)
    assert b.elapsed == 30.0 and b.jobs.job(second).state == "RUN"


def test_run_raises_when_work_never_ends(make_broker, tmp_path):
    path = tmp_path / "ticker.py"
    path.write_text(
        "from flux.brokermod import BrokerModule\n"
        "class Ticker(BrokerModule):\n"
        "    def __init__(self, h, *args):\n"
        "        super().__init__(h, *args)\n"
        "        self.t = h.timer_watcher_create(1.0, lambda *a: None, repeat=1.0)\n"
        "        self.t.start()\n"
        "def mod_main(h, *args):\n"
        "    Ticker(h, *args).run()\n"
    )
    b = make_broker()
    b.load(str(path))
    with pytest.raises(BrokerStalled, match="still busy after 20.0 virtual seconds"):
        b.run(limit=20.0)
    assert b.elapsed == 20.0


def test_a_pass_that_waits_in_itself_trips_the_iterations_budget(make_broker):
    # The conformance gallery's module for robust.no-livelock: when the
    # head does not fit, its pass yields and tries again.
    path = WAITING_PASS
    b = make_broker(Machine.uniform(1, 4))
    b.max_iterations_per_instant = 500
    b.load(str(path))
    first = b.jobs.submit(whole_nodes(1), runtime=30)
    b.run_for(10.0)  # one pass at t=0, the clock free to move after it
    assert b.jobs.job(first).state == "RUN" and b.elapsed == 10.0
    b.jobs.submit(whole_nodes(1), runtime=30)
    with pytest.raises(BrokerLivelock) as caught:
        b.run_steps(1000)  # (without the limit: 1,000 steps at t=10)
    assert b.elapsed == 10.0  # the clock never reached the first job's end
    line = 1 + next(
        i
        for i, text in enumerate(path.read_text().splitlines())
        if text.strip().startswith("yield  # the fault")
    )
    assert str(caught.value) == (
        "500 reactor iterations of livelock_yielding_pass at t=10.000 without "
        "the clock moving (limit 500), busy with idle watchers; a pass "
        f"suspended at {path}:{line} in schedule: a real broker would spin a "
        "core on it until some other event came"
    )


def test_iterations_are_counted_per_instant_and_only_under_a_limit(make_broker):
    # The generator example yields once a job started: ten jobs at each of
    # three instants stay within a limit of 20 iterations an instant, the
    # thirty at one instant do not; without a limit nothing is counted.
    def run(limit, instants):
        b = make_broker(Machine.uniform(64, 4))
        b.max_iterations_per_instant = limit
        b.load(sched("seed_generator.py"))
        for at in instants:
            b.run_until(EPOCH + at)
            for _ in range(30 // len(instants)):
                b.jobs.submit(whole_nodes(1), runtime=30)
        b.run()
        return b

    spread = run(20, (0.0, 5.0, 9.0))
    assert spread.stats()["sched_yields"] == 30
    unlimited = run(None, (0.0,))
    assert unlimited.stats()["sched_yields"] == 30 and not unlimited._iterations
    with pytest.raises(
        BrokerLivelock, match="^20 reactor iterations of seed_generator"
    ):
        run(20, (0.0,))


def test_prepare_and_check_watchers_always_on_let_the_clock_move(make_broker):
    # The libev way to measure a loop's utilisation: a prepare watcher (the
    # loop is about to block) and a check watcher (it woke), both always
    # active.  Neither is work: each runs once per wakeup, the jobs run to
    # completion, and no instant needs more than a few iterations.
    b = make_broker(Machine.uniform(1, 4))
    b.max_iterations_per_instant = 10
    b.load(sched("loop_utilisation.py"))
    ids = [b.jobs.submit(whole_nodes(1), runtime=10) for _ in range(2)]
    b.run()
    assert [b.jobs.job(j).state for j in ids] == ["INACTIVE"] * 2
    assert [elapsed(b, b.jobs.job(j).t_end) for j in ids] == [10.0, 20.0]
    report = b.rpc("loop_utilisation.report")
    # one prepare before the loop first blocks, then a check and a prepare
    # per wakeup: the allocs and the first job's R commit answered at t=0,
    # its free and the second job's commit at 10, the last free at 20
    assert report["check"] == [0.0, 0.0, 10.0, 10.0, 20.0]
    assert report["prepare"] == [0.0, *report["check"]]


def test_signal_watchers_start_stop_and_never_fire(make_broker):
    # flux-python's handle makes signal watchers; the kit sends a module no
    # signals, so one started stays silent and never holds the clock.
    b = make_broker(Machine.uniform(1, 4))
    b.load(sched("signal_idioms.py:SignalWatcherScheduler"))
    ids = [b.jobs.submit(whole_nodes(1), runtime=10) for _ in range(2)]
    b.run()
    assert [elapsed(b, b.jobs.job(j).t_end) for j in ids] == [10.0, 20.0]
    report = b.rpc("signal_idioms.report")
    assert report == {"signalled": [], "refused": "EINVAL"}
