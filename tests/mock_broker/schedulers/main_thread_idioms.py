"""The guide's minimal scheduler doing what code on a process's main
thread may do, as an author who runs it in a real broker would (there
``mod_main`` and the callbacks run on the main thread of the module's own
process).  Each answers ``main_thread_idioms.report`` with what it saw;
loaded as ``main_thread_idioms.py:Class``."""

import asyncio
import os
import signal
import sqlite3
import sys
import threading

import flux
from flux.brokermod import request_handler

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from seed_minimal import SimpleScheduler  # noqa: E402


class SignalHandlerScheduler(SimpleScheduler):
    """Sets a SIGUSR1 handler in mod_main and a SIGUSR2 one in a callback."""

    def __init__(self, h, *args):
        super().__init__(h, *args)
        self.seen = {"mod_main": self.swap(signal.SIGUSR1, self.on_signal)}

    def swap(self, signum, handler):
        previous = signal.signal(signum, handler)
        return {
            "previous": self.name(previous),
            "now": self.name(signal.getsignal(signum)),
        }

    def name(self, handler):
        if handler == self.on_signal:
            return "own"
        return getattr(handler, "name", repr(handler))

    def on_signal(self, signum, frame):
        raise AssertionError("the mock broker sends no signals")

    def schedule(self):
        if "callback" not in self.seen:
            self.seen["callback"] = self.swap(signal.SIGUSR2, signal.SIG_IGN)
            self.seen["callback"]["usr1"] = self.name(signal.getsignal(signal.SIGUSR1))
        super().schedule()

    @request_handler("report")
    def report(self, msg):
        self.handle.respond(msg, self.seen)


async def double(x):
    await asyncio.sleep(0)
    return 2 * x


class AsyncioScheduler(SimpleScheduler):
    """Runs a coroutine on its event loop in mod_main and in each alloc."""

    def __init__(self, h, *args):
        super().__init__(h, *args)
        self.loop = asyncio.get_event_loop()
        self.results = [self.loop.run_until_complete(double(1))]
        self.same_loop = []

    def alloc(self, request, jobid, priority, userid, t_submit, jobspec):
        loop = asyncio.get_event_loop()
        self.same_loop.append(loop is self.loop)
        self.results.append(loop.run_until_complete(double(len(self.results))))
        super().alloc(request, jobid, priority, userid, t_submit, jobspec)

    @request_handler("report")
    def report(self, msg):
        answer = {"results": self.results, "same_loop": self.same_loop}
        self.handle.respond(msg, answer)


class ThreadAffineScheduler(SimpleScheduler):
    """Keeps what only its own thread may use: an sqlite3 connection (by
    default usable only on the thread that opened it) and threading.local
    data, both made in mod_main and used in every alloc; and starts a
    thread in mod_main without saying whether it is a daemon."""

    def __init__(self, h, *args):
        super().__init__(h, *args)
        self.db = sqlite3.connect(":memory:")
        self.db.execute("create table allocs (jobid integer)")
        self.local = threading.local()
        self.local.owner = "mod_main"
        self.thread = threading.current_thread()
        self.main = self.thread is threading.main_thread()
        started = threading.Thread(target=lambda: None)
        self.daemon = started.daemon
        self.seen = []

    def alloc(self, request, jobid, priority, userid, t_submit, jobspec):
        self.db.execute("insert into allocs values (?)", (jobid,))
        self.seen.append(
            {
                "same_thread": threading.current_thread() is self.thread,
                "local": getattr(self.local, "owner", None),
            }
        )
        super().alloc(request, jobid, priority, userid, t_submit, jobspec)

    @request_handler("report")
    def report(self, msg):
        (count,) = self.db.execute("select count(*) from allocs").fetchone()
        answer = {
            "allocs": count,
            "seen": self.seen,
            "main": self.main,
            "daemon": self.daemon,
        }
        self.handle.respond(msg, answer)


class SecondHandleScheduler(SimpleScheduler):
    """Opens a handle of its own with flux.Flux() in mod_main, as code in a
    module's process may, and looks each job up with it in every alloc."""

    def __init__(self, h, *args):
        super().__init__(h, *args)
        self.own = flux.Flux()
        self.looked_up = []

    def alloc(self, request, jobid, priority, userid, t_submit, jobspec):
        payload = {"id": jobid, "keys": ["jobspec"], "flags": 0}
        answer = self.own.rpc("job-info.lookup", payload).get()
        self.looked_up.append(answer["id"])
        super().alloc(request, jobid, priority, userid, t_submit, jobspec)

    @request_handler("report")
    def report(self, msg):
        self.handle.respond(msg, {"looked_up": self.looked_up})
