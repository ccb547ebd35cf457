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

R is committed in batches: the jobs started since the last commit share
one KVS transaction, committed just before the reactor next waits for
events (a prepare watcher), and each gets its SUCCESS once that commit is
done: one commit request and response, and one KVS root update in the
broker, per batch instead of per job.  :meth:`KnownIds.commit_now` may
hold a batch back for the next iteration (up to :attr:`KnownIds.COMMIT_BATCH`
jobs): :class:`~flux_sched_base.scheduler.PlanningScheduler` does while
its pass is suspended right after a start, so jobs started in a row share
a commit however often the pass returns to the reactor.  Each R
is encoded to JSON once: that text is stored as the KVS value (a raw put
of JSON text stores the same bytes as a JSON put) and spliced into the
SUCCESS response, where flux-python would encode R once for each.
"""

from __future__ import annotations

import json

from flux.kvs import KVSTxn
from flux.kvs import commit_async as kvs_commit_async
from flux.scheduler import AllocRequest, Scheduler

# RFC 27 alloc response types.
SUCCESS, ANNOTATE, DENY, CANCEL = 0, 1, 2, 3

#: The state flux-python's AllocRequest keeps, which :func:`_request` fills
#: in without decoding the message again; with any other layout the
#: request is made by flux-python's own constructor.
_REQUEST_SLOTS = ("_scheduler", "_msg", "jobid", "_annotated_sched_keys", "_finalized")

# Compact and ASCII-only: the same text is a KVS value and part of a response.
_encode = json.JSONEncoder(separators=(",", ":")).encode


def r_key(jobid: int) -> str:
    """The KVS key of a job's R, ``job.<id>.R`` with the id in RFC 19's
    dothex form (16 hex digits in four dot-separated groups), as
    ``flux.job.JobID(jobid).kvs`` gives it without a call into libflux."""
    digits = f"{jobid:016x}"
    return f"job.{digits[:4]}.{digits[4:8]}.{digits[8:12]}.{digits[12:]}.R"


class _KeysInOrder(dict):
    """The ``sched`` keys a request was annotated with, as the set
    flux-python keeps, but iterated in the order they were first sent: its
    SUCCESS nulls them in that order, the same in every run (a set's order
    follows the interpreter's string hash seed)."""

    def update(self, keys) -> None:  # type: ignore[override]
        for key in keys:
            self[key] = None


def _request(scheduler, msg, jobid: int) -> AllocRequest:
    """An :class:`AllocRequest` for *msg*, whose job id is *jobid*."""
    if getattr(AllocRequest, "__slots__", None) != _REQUEST_SLOTS:
        return AllocRequest(scheduler, msg)
    request = AllocRequest.__new__(AllocRequest)
    request._scheduler = scheduler
    request._msg = msg
    request.jobid = jobid
    request._annotated_sched_keys = _KeysInOrder()
    request._finalized = False
    return request


class KnownIds(Scheduler):
    """A :class:`~flux.scheduler.Scheduler` that answers alloc requests
    without decoding them again (see the module doc)."""

    #: Most jobs whose R one commit holds when commits are deferred
    #: (:meth:`commit_now`).
    COMMIT_BATCH = 8

    def __init__(self, h, *args):
        super().__init__(h, *args)
        # id(request message) -> job id, while the request is open
        self._known_ids: dict[int, int] = {}
        # (msg, jobid, R, annotations) of started jobs whose R awaits commit
        self._to_commit: list[tuple] = []
        self._commit_watcher = h.prepare_watcher_create(self._commit_batch)
        self.r_commits = 0  # KVS commits of R sent

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
        """Commit R to the KVS, then answer SUCCESS (as flux-python does),
        in one commit with the R of the other jobs started since the last
        one (see :meth:`commit_now`)."""
        jobid = self._known_ids.pop(id(msg), None)
        if jobid is None:
            super().alloc_success(msg, R, annotations)
            return
        if not self._to_commit:
            self._commit_watcher.start()
        self._to_commit.append((msg, jobid, R, annotations))

    def commit_now(self, waiting: int) -> bool:
        """Whether the R of *waiting* started jobs go to the KVS in this
        reactor iteration (always, here); a subclass may defer them to
        share a commit with the next jobs it starts."""
        return True

    def _commit_batch(self, *_):
        # Prepare watcher: the reactor is about to wait for events.
        if self._to_commit and not self.commit_now(len(self._to_commit)):
            return  # stays armed: runs again next iteration
        self._commit_watcher.stop()
        batch, self._to_commit = self._to_commit, []
        if not batch:
            return
        try:
            txn = KVSTxn(self.handle)
            for i, (msg, jobid, R, notes) in enumerate(batch):
                text = _encode(R)
                txn.put(r_key(jobid), text, raw=True)
                batch[i] = (msg, jobid, text, notes)
            future = kvs_commit_async(self.handle, _kvstxn=txn)
            future.then(self._committed, batch)
            self.r_commits += 1
        except Exception as exc:  # as a failed commit: the jobs cannot start
            self.log.error(f"alloc: KVS commit of R failed: {exc}")
            self.stop_error()

    def _committed(self, future, batch):
        # error_string() says what get() would raise, without the signal
        # handling around get() (a new handle object per call).
        problem = future.error_string()
        if problem is not None:
            self.log.error(f"alloc: KVS commit failed: {problem}")
            self.stop_error()
            return
        for msg, jobid, text, notes in batch:
            # {"id": jobid, "type": SUCCESS, "R": R, "annotations": notes}
            resp = f'{{"id":{jobid},"type":{SUCCESS},"R":{text}'
            if notes is not None:
                resp += ',"annotations":' + _encode(notes)
            self.handle.respond(msg, resp + "}")

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
