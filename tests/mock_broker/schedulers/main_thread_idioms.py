"""The guide's minimal scheduler doing what code on a process's main
thread may do, as an author who runs it in a real broker would (there
``mod_main`` and the callbacks run on the main thread of the module's own
process).  Each answers ``main_thread_idioms.report`` with what it saw;
loaded as ``main_thread_idioms.py:Class``."""

import asyncio
import os
import signal
import sys

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
