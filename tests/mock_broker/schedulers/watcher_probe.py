"""Plain broker modules (not schedulers) that record what their reactor does.

Loaded as ``watcher_probe.py:Class``; each answers
``watcher_probe.report`` with what it recorded.
"""

import time

from flux.brokermod import BrokerModule, request_handler


def _vnow():
    """Virtual seconds since the broker started, from time.monotonic()."""
    return round(time.monotonic() - 1000.0, 6)


class TimerProbe(BrokerModule):
    """One-shot timers re-armed with reset(after=), and a repeating timer."""

    def __init__(self, h, *args):
        super().__init__(h, *args)
        self.fired = []
        self.a = h.timer_watcher_create(10.0, self.on_a)
        self.b = h.timer_watcher_create(3.0, self.on_b)
        self.r = h.timer_watcher_create(7.0, self.on_r, repeat=7.0)
        for w in (self.a, self.b, self.r):
            w.start()

    def on_b(self, *_):
        self.fired.append(["b", _vnow()])
        self.a.reset(after=20.0)  # re-arm from now: 3 + 20, not 10

    def on_a(self, *_):
        self.fired.append(["a", _vnow()])
        if len([f for f in self.fired if f[0] == "a"]) == 1:
            self.a.reset(after=5.0)  # a one-shot re-armed from its callback

    def on_r(self, *_):
        self.fired.append(["r", _vnow()])
        if len([f for f in self.fired if f[0] == "r"]) == 3:
            self.r.stop()

    @request_handler("report")
    def report(self, msg):
        self.handle.respond(msg, {"fired": self.fired})


class OrderProbe(BrokerModule):
    """Prepare, timer, message, continuation, idle and check callbacks."""

    def __init__(self, h, *args):
        super().__init__(h, *args)
        self.order = []
        self.checks = 0
        self.prepare = h.prepare_watcher_create(self.on_prepare)
        self.check = h.check_watcher_create(self.on_check)
        self.idle = h.idle_watcher_create(self.on_idle)
        self.timer = h.timer_watcher_create(0.0, self.on_timer)
        for w in (self.check, self.idle, self.timer, self.prepare):
            w.start()

    def on_prepare(self, *_):
        self.order.append("prepare")

    def on_timer(self, *_):
        self.order.append("timer")

    def on_idle(self, *_):
        self.order.append("idle")

    def on_check(self, *_):
        self.order.append("check")
        self.checks += 1
        if self.checks == 2:
            for w in (self.prepare, self.idle, self.check):
                w.stop()

    @request_handler("ping")
    def ping(self, msg):
        self.order.append("message")
        f = self.handle.rpc("kvs.lookup", {"key": "no.such.key"})
        f.then(lambda fut: self.order.append("continuation"))
        self.handle.respond(msg, {})

    @request_handler("report")
    def report(self, msg):
        self.handle.respond(msg, {"order": self.order})


class IdleProbe(BrokerModule):
    """An idle watcher holds the clock still until it stops itself."""

    def __init__(self, h, *args):
        super().__init__(h, *args)
        self.idle_times = []
        self.timer_time = None
        self.idle = h.idle_watcher_create(self.on_idle)
        self.timer = h.timer_watcher_create(1.0, self.on_timer)
        self.idle.start()
        self.timer.start()

    def on_idle(self, *_):
        self.idle_times.append(_vnow())
        if len(self.idle_times) == 5:
            self.idle.stop()

    def on_timer(self, *_):
        self.timer_time = _vnow()

    @request_handler("report")
    def report(self, msg):
        self.handle.respond(msg, {"idle": self.idle_times, "timer": self.timer_time})


class PrepareProbe(BrokerModule):
    """A prepare watcher started by a timer's callback, which stops itself,
    and one that stays active from the start."""

    def __init__(self, h, *args):
        super().__init__(h, *args)
        self.flushed = []
        self.always = []
        self.flush = h.prepare_watcher_create(self.on_flush)
        self.steady = h.prepare_watcher_create(self.on_steady)
        self.timers = [
            h.timer_watcher_create(after, self.on_timer) for after in (5.0, 12.0)
        ]
        for w in (self.steady, *self.timers):
            w.start()

    def on_timer(self, *_):
        self.flush.start()

    def on_flush(self, *_):
        self.flushed.append(_vnow())
        self.flush.stop()

    def on_steady(self, *_):
        self.always.append(_vnow())

    @request_handler("report")
    def report(self, msg):
        self.handle.respond(msg, {"flushed": self.flushed, "always": self.always})
