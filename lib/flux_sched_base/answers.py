"""Answering alloc requests with the job id already known.

flux-python's :class:`flux.scheduler.Scheduler` answers an alloc request
(SUCCESS, ANNOTATE, DENY, CANCEL) by reading the job id from the request
message's payload, which decodes the whole request again, jobspec included
(a submitted jobspec carries the user's environment: kilobytes of JSON).
Besides the handler's own decode, a started job pays that three times (the
request object, the KVS commit of R, the response after it) and every
``t_estimate`` update once more.

:class:`KnownIds` decodes an arriving request once (its ``sched.alloc``
handler builds the request object with the id already read), remembers
the job id (:meth:`KnownIds.remember`) and answers with it.  The messages
sent, the KVS commit before SUCCESS and the error handling are
flux-python's; a request it was not told about is answered by
flux-python's own code.
"""

from __future__ import annotations

from flux.job import JobID
from flux.kvs import KVSTxn
from flux.kvs import commit_async as kvs_commit_async
from flux.scheduler import AllocRequest, Scheduler

# RFC 27 alloc response types.
SUCCESS, ANNOTATE, DENY, CANCEL = 0, 1, 2, 3

#: The state flux-python's AllocRequest keeps, which :func:`_request` fills
#: in without decoding the message again; with any other layout the
#: request is made by flux-python's own constructor.
_REQUEST_SLOTS = ("_scheduler", "_msg", "jobid", "_annotated_sched_keys", "_finalized")


def _request(scheduler, msg, jobid: int) -> AllocRequest:
    """An :class:`AllocRequest` for *msg*, whose job id is *jobid*."""
    if getattr(AllocRequest, "__slots__", None) != _REQUEST_SLOTS:
        return AllocRequest(scheduler, msg)
    request = AllocRequest.__new__(AllocRequest)
    request._scheduler = scheduler
    request._msg = msg
    request.jobid = jobid
    request._annotated_sched_keys = set()
    request._finalized = False
    return request


class KnownIds(Scheduler):
    """A :class:`~flux.scheduler.Scheduler` that answers alloc requests
    without decoding them again (see the module doc)."""

    def __init__(self, h, *args):
        super().__init__(h, *args)
        # id(request message) -> job id, while the request is open
        self._known_ids: dict[int, int] = {}

    def _handle_alloc(self, msg):
        # flux-python's sched.alloc handler (registered under this name by
        # the base class), with the request decoded once instead of twice.
        try:
            p = msg.payload
            jobid = p["id"]
            request = _request(self, msg, jobid)
            self.alloc(
                request, jobid, p["priority"], p["userid"], p["t_submit"], p["jobspec"]
            )
            self._request_schedule()
        except Exception as exc:  # as flux-python: any failure stops the module
            self.log.error(f"alloc callback raised: {exc}")
            self.stop_error()

    def remember(self, request, jobid: int) -> None:
        """Record the job id of *request* (an :class:`AllocRequest`)."""
        msg = getattr(request, "_msg", None)
        if msg is not None:
            self._known_ids[id(msg)] = jobid

    def alloc_success(self, msg, R, annotations=None):
        """Commit R to the KVS, then answer SUCCESS (as flux-python does)."""
        jobid = self._known_ids.pop(id(msg), None)
        if jobid is None:
            super().alloc_success(msg, R, annotations)
            return
        txn = KVSTxn(self.handle)
        txn.put(f"{JobID(jobid).kvs}.R", R)
        future = kvs_commit_async(self.handle, _kvstxn=txn)
        future.then(self._committed, (msg, jobid, R, annotations))

    def _committed(self, future, args):
        msg, jobid, R, annotations = args
        try:
            future.get()
        except OSError as exc:
            self.log.error(f"alloc: KVS commit failed: {exc}")
            self.stop_error()
            return
        resp = {"id": jobid, "type": SUCCESS, "R": R}
        if annotations is not None:
            resp["annotations"] = annotations
        self.handle.respond(msg, resp)

    def alloc_deny(self, msg, note=None):
        """Answer DENY, with *note* if given."""
        jobid = self._known_ids.pop(id(msg), None)
        if jobid is None:
            super().alloc_deny(msg, note)
            return
        resp = {"id": jobid, "type": DENY}
        if note is not None:
            resp["note"] = note
        self.handle.respond(msg, resp)

    def alloc_cancel(self, msg):
        """Answer CANCEL."""
        jobid = self._known_ids.pop(id(msg), None)
        if jobid is None:
            super().alloc_cancel(msg)
            return
        self.handle.respond(msg, {"id": jobid, "type": CANCEL})

    def alloc_annotate(self, msg, annotations):
        """Answer ANNOTATE; the request stays open."""
        jobid = self._known_ids.get(id(msg))
        if jobid is None:
            super().alloc_annotate(msg, annotations)
            return
        self.handle.respond(
            msg, {"id": jobid, "type": ANNOTATE, "annotations": annotations}
        )
