"""Deliberately broken schedulers, each breaking one RFC 27 rule.

Every class is the policy of flux-core's guide *Writing a Python Scheduler*
(:class:`Placing`) with one fault; load one as ``broken.py:ClassName``.
"""

import errno
import heapq

from flux.resource import InfeasibleRequest, InsufficientResources
from flux.scheduler import Scheduler


class Placing(Scheduler):
    """The seed policy, with hooks for the faults below."""

    def schedule(self):
        while self._queue:
            job = self._queue[0]
            try:
                alloc = self.resources.alloc(job.jobid, job.resource_request)
            except InsufficientResources:
                self.blocked(job)
                break
            except InfeasibleRequest as exc:
                job.request.deny(str(exc))
            else:
                self.place(job, alloc)
            heapq.heappop(self._queue)

    def place(self, job, alloc):
        job.request.success(alloc)

    def blocked(self, job):
        pass


class AnswersTwice(Placing):
    """Denies every request, then denies it again."""

    def place(self, job, alloc):
        self.resources.free(job.jobid, alloc, final=True)
        job.request.deny("first answer")
        job.request.deny("second answer")


class SecondSuccessWithoutR(Placing):
    """The second allocation is a SUCCESS with no R in it."""

    successes = 0

    def place(self, job, alloc):
        self.successes += 1
        if self.successes == 2:
            self.handle.respond(job.request._msg, {"id": job.jobid, "type": 0})
        else:
            job.request.success(alloc)


class SkipsKVSCommit(Placing):
    """Responds SUCCESS with R but never commits R to the KVS."""

    def place(self, job, alloc):
        self.handle.respond(
            job.request._msg, {"id": job.jobid, "type": 0, "R": alloc.to_dict()}
        )


class ReusesR(Placing):
    """Gives every job the R of the first job it allocated."""

    first_R = None

    def place(self, job, alloc):
        if self.first_R is None:
            self.first_R = alloc.to_dict()
        job.request.success(self.first_R)


class IgnoresDown(Placing):
    """Forgets that ranks went down: the pool keeps everything up."""

    def resource_update(self):
        self.resources.mark_up("all")


class OneNodeOnly(Placing):
    """Hands out rank 0 alone, whatever the job asked for."""

    def place(self, job, alloc):
        self.resources.free(job.jobid, alloc, final=True)
        R = {
            "version": 1,
            "execution": {
                "R_lite": [{"rank": "0", "children": {"core": "0-3"}}],
                "nodelist": ["node0"],
                "starttime": 0.0,
                "expiration": 0.0,
            },
        }
        job.request.success(R)


class IgnoresCancel(Placing):
    """Never answers sched.cancel (the job stays in its queue)."""

    def cancel(self, jobid):
        pass


class CancelsUnasked(Placing):
    """Answers CANCEL, unasked, the first time a job cannot start."""

    cancelled = ()

    def blocked(self, job):
        if job.jobid in self.cancelled:
            return
        self.cancelled = {*self.cancelled, job.jobid}
        heapq.heappop(self._queue)
        job.request.cancel()


class RaisesInSchedule(Placing):
    """A policy bug: schedule() raises."""

    def schedule(self):
        raise RuntimeError("policy bug: queue is inconsistent")


class AnswersWithError(Placing):
    """Answers an alloc request with an error response."""

    def place(self, job, alloc):
        self.resources.free(job.jobid, alloc, final=True)
        self.handle.respond_error(job.request._msg, errno.ENOMEM, "out of memory")


#: SendsRaw faults that answer SUCCESS with this R_lite (committed first).
_R_LITE_FAULTS = {
    # a billion ranks in a dozen characters (the number is cut to 32 bits)
    "huge-rank": [{"rank": "0-99999999999", "children": {"core": "0-3"}}],
    "huge-core": [{"rank": "0", "children": {"core": "0-2000000000"}}],
    "huge-gpu": [{"rank": "0", "children": {"core": "0-3", "gpu": "0-2000000000"}}],
    "negative-rank": [{"rank": "-1", "children": {"core": "0-3"}}],
    "entry-not-object": [7],
    "children-list": [{"rank": "0", "children": ["core"]}],
}


class SendsRaw(Placing):
    """Answers the first request with a hand-made response: ``fault=NAME``."""

    def __init__(self, h, *args):
        super().__init__(h, *args)
        self.fault = None
        for arg in list(self._pending_args):
            if arg.startswith("fault="):
                self.fault = arg.split("=", 1)[1]
                self._pending_args.remove(arg)

    def place(self, job, alloc):
        fault, self.fault = self.fault, None
        if fault is None:
            job.request.success(alloc)
            return
        msg, jobid = job.request._msg, job.jobid
        self.resources.free(jobid, alloc, final=True)
        if fault == "unknown-type":
            self.handle.respond(msg, {"id": jobid, "type": 7})
        elif fault == "unknown-job":
            self.handle.respond(msg, {"id": jobid + 1000, "type": 2})
        elif fault == "no-id":
            self.handle.respond(msg, {"type": 2})
        elif fault == "empty-annotate":
            self.handle.respond(msg, {"id": jobid, "type": 1})
        elif fault == "annotate-after-deny":
            job.request.deny("no")
            self.handle.respond(
                msg, {"id": jobid, "type": 1, "annotations": {"sched": {"x": 1}}}
            )
        elif fault == "missing-rank":
            R = alloc.to_dict()
            R["execution"]["R_lite"] = [{"rank": "7", "children": {"core": "0-3"}}]
            R["execution"]["nodelist"] = ["node7"]
            job.request.success(R)
        elif fault == "missing-core":
            R = alloc.to_dict()
            R["execution"]["R_lite"][0]["children"] = {"core": "0-3,9"}
            job.request.success(R)
        elif fault == "nan-text":
            # raw text, as a module may send it: Python's json reads NaN
            self.handle.respond(msg, f'{{"id":{jobid},"type":0,"R":{{"x":NaN}}}}')
        elif fault == "huge-float-text":
            self.handle.respond(msg, f'{{"id":{jobid},"type":0,"R":{{"x":1e400}}}}')
        elif fault == "huge-id":
            self.handle.respond(msg, {"id": 2**64, "type": 0, "R": alloc.to_dict()})
        elif fault == "bool-id":
            self.handle.respond(msg, {"id": True, "type": 0, "R": alloc.to_dict()})
        elif fault == "bool-type":
            self.handle.respond(msg, {"id": jobid, "type": True})
        elif fault == "note-not-string":
            self.handle.respond(msg, {"id": jobid, "type": 2, "note": {"a": [1]}})
        elif fault == "payload-list":
            self.handle.respond(msg, [jobid, 0])
        elif fault == "annotations-list":
            self.alloc_success(msg, alloc.to_dict(), [1])
        elif fault in _R_LITE_FAULTS:
            R = alloc.to_dict()
            R["execution"]["R_lite"] = _R_LITE_FAULTS[fault]
            job.request.success(R)
