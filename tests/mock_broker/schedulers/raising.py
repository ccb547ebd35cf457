"""Schedulers that raise inside a callback, for the error reports.

``RaisesInAlloc``: its ``alloc()`` override raises; flux-python's message
handler catches the exception, logs it and stops the reactor with a bare
error, so only the log knows where it came from.
``RaisesBelowItsOwnCode``: ``schedule()`` calls into the standard library,
which raises there; the report must still name this file's line.
``InterruptedInSchedule``: ``schedule()`` raises ``KeyboardInterrupt``, as
a Ctrl-C landing inside a callback does in ``flux-schedkit run``; the
kit's worker ignores SIGINT, so there it is the module's own crash.
``UnprintableInSchedule``, ``UnprintableInAlloc``: raise an exception whose
``__str__`` raises, uncaught and caught by flux-python's handler.
"""

import json

from flux.scheduler import Scheduler


class RaisesInAlloc(Scheduler):
    def alloc(self, request, jobid, priority, userid, t_submit, jobspec):
        queue = jobspec["attributes"]["system"]["queue"]  # no such key
        super().alloc(request, jobid, priority, userid, t_submit, jobspec)
        return queue

    def schedule(self):
        pass


class RaisesBelowItsOwnCode(Scheduler):
    def schedule(self):
        json.loads("{not json")  # raises in the json module


class InterruptedInSchedule(Scheduler):
    def schedule(self):
        raise KeyboardInterrupt


class Unprintable(Exception):
    def __str__(self):
        raise ValueError("no str for you")

    __repr__ = __str__


class UnprintableInSchedule(Scheduler):
    def schedule(self):
        raise Unprintable()  # in schedule


class UnprintableInAlloc(Scheduler):
    def alloc(self, request, jobid, priority, userid, t_submit, jobspec):
        raise Unprintable()  # in alloc

    def schedule(self):
        pass
