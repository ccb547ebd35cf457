"""A model of flux-core 0.88's job-manager, as the scheduler sees it.

What is modelled (see ``shared/RFC27-NOTES.md`` and flux-core's
``src/modules/job-manager/alloc.c``):

- the alloc queue, ordered by priority (descending) then submission;
- ``sched-hello`` (one response per job holding resources, ``free`` for
  partially released ones when ``partial-ok``), ``sched-ready`` in limited
  or unlimited mode;
- limited mode: at most N alloc requests outstanding, and *withdrawal*: when
  an unsent job outranks the lowest outstanding request, that request gets a
  ``sched.cancel`` and, on the CANCEL response, goes back in the queue;
- alloc responses: SUCCESS (R in the payload), ANNOTATE, DENY, CANCEL, with
  the tolerance and teardown rules of the real job-manager;
- user cancel, hold (urgency 0) and priority changes (``sched.prioritize``);
- jobs that run for a scripted runtime, bounded by R's expiration, then
  release their resources in one ``sched.free`` or rank by rank
  (housekeeping ``release-after``);
- ``sched.expiration`` updates, and exceptions raised by the scheduler.
"""

from __future__ import annotations

import copy
import errno
import math

from flux.idset import IDset
from flux.job import JobID
from sortedcontainers import SortedList

from mock_broker.flux_substitute.message import compact_json
from mock_broker.jobmanager.annotations import merge_annotations
from mock_broker.jobmanager.housekeeping import Housekeeping
from mock_broker.jobmanager.jobs import (
    ALLOC_ANNOTATE,
    ALLOC_CANCEL,
    ALLOC_DENY,
    ALLOC_SUCCESS,
    CLEANUP,
    INACTIVE,
    PRIORITY_MIN,
    RUN,
    SCHED,
    URGENCY_DEFAULT,
    Job,
    job_order,
    priority_from_urgency,
    ranks_of,
)
from mock_broker.runtime.transcript import Later, errnum_text


def _alloc_payload(job: Job) -> str:
    """The JSON text of a ``sched.alloc`` request for *job*, with the
    jobspec text encoded at submission (the largest part) spliced in."""
    head = compact_json(
        {
            "id": job.id,
            "priority": job.priority,
            "userid": job.userid,
            "t_submit": job.t_submit,
        }
    )
    return f'{head[:-1]},"jobspec":{job.jobspec_text}}}'


def _kvs_jobspec(job: Job) -> str:
    """The text of the jobspec as flux-core's job-ingest stores it under
    the job's KVS key: without ``attributes.system.environment`` (dropped
    there for its bulk), else the very text the alloc requests carry."""
    system = job.jobspec.get("attributes") if isinstance(job.jobspec, dict) else None
    system = system.get("system") if isinstance(system, dict) else None
    if not isinstance(system, dict) or "environment" not in system:
        return job.jobspec_text
    stored = copy.deepcopy(job.jobspec)
    del stored["attributes"]["system"]["environment"]
    return compact_json(stored)


def _expiration_of(R: dict) -> float:
    """R's ``execution.expiration``, or 0 (none) when the scheduler's R
    gives no usable one: what it says is judged by the referee, and the
    job still ends by its runtime."""
    execution = R.get("execution")
    value = execution.get("expiration") if isinstance(execution, dict) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0.0
    try:
        value = float(value)
    except OverflowError:  # an integer beyond any float
        return 0.0
    return value if math.isfinite(value) else 0.0


def _is_integer(value) -> bool:
    """A JSON integer: jansson's ``I`` and ``i`` take no boolean."""
    return isinstance(value, int) and not isinstance(value, bool)


def _alloc_response_problem(p) -> str | None:
    """Why flux-core's ``flux_msg_unpack(msg, "{s:I s:i s?s s?o s?o}", "id",
    "type", "note", "annotations", "R")`` fails for payload *p*, or None."""
    if not isinstance(p, dict):
        return "the payload is not a JSON object"
    for key in ("id", "type"):
        if key not in p:
            return f"no {key}"
        if not _is_integer(p[key]):
            return f"{key} is not an integer"
    if p.get("note") is not None and not isinstance(p["note"], str):
        return "note is not a string"
    return None


class JobManager:
    """The job-manager end of RFC 27."""

    def __init__(self, broker, default_runtime: float, release_after: float | None):
        self.broker = broker
        self.default_runtime = default_runtime
        self.release_after = release_after
        self.jobs: dict[int, Job] = {}
        self.queue: SortedList = SortedList(key=job_order)
        self.sent: SortedList = SortedList(key=job_order)
        self.housekeeping = Housekeeping(self)
        self.online = False
        self.limit = 0
        self.link = None
        self._id_seq = 0
        self._dirty = False
        #: Counters for statistics and benchmarks.
        self.stats = {"alloc_sent": 0, "withdrawn": 0, "started": 0, "completed": 0}
        self._in_sched = 0

    # -- queries ----------------------------------------------------------------

    def job(self, jobid: int) -> Job:
        try:
            return self.jobs[int(jobid)]
        except KeyError:
            raise KeyError(f"no job {jobid}") from None

    def jobs_in(self, state: str) -> list[Job]:
        return [j for j in self.jobs.values() if j.state == state]

    @property
    def sched_count(self) -> int:
        """How many jobs are in SCHED, kept as a count: a benchmark reads it
        often, and scanning every job ever submitted would cost more than
        the broker's own work."""
        return self._in_sched

    def allocated_ranks(self) -> dict[int, int]:
        """Rank -> job id for every rank a job or housekeeping still holds."""
        held: dict[int, int] = {}
        for job in self.jobs.values():
            if job.has_resources and not self.housekeeping.holds(job.id):
                for rank in self.ranks_held(job):
                    held[rank] = job.id
        held.update(self.housekeeping.held_ranks())
        return held

    def ranks_held(self, job: Job) -> set[int]:
        """The ranks of the machine that *job*'s R names.  The scheduler
        wrote R: ranks beyond the machine are not expanded, and an R that
        cannot be read holds none (the referee judges it at SUCCESS)."""
        try:
            return ranks_of(job.R, self.broker.machine.size)
        except (ValueError, TypeError):
            return set()

    # -- submission and user actions ----------------------------------------------

    def _new_id(self) -> int:
        # A FLUID-like id: milliseconds since the instance started, then a
        # sequence number, so ids sort in submission order.
        self._id_seq += 1
        ms = int(self.broker.elapsed * 1000)
        return (ms << 24) | (self._id_seq & 0xFFFFFF)

    def submit(
        self,
        jobspec: dict,
        urgency: int = URGENCY_DEFAULT,
        priority: int | None = None,
        runtime: float | None = None,
        userid: int = 1000,
        release: list | None = None,
    ) -> int:
        """Submit a job; it enters SCHED at once. Returns its id.

        *jobspec* may be any JSON value (a scheduler must deny what it
        cannot use), but it must be one a real broker can carry.

        Raises:
            ValueError: the urgency is outside 0-31, or the jobspec is not
                JSON (NaN, infinity, non-string keys, other types).
        """
        if not 0 <= urgency <= 31:
            raise ValueError(f"urgency {urgency} is outside 0-31")
        try:
            # Encoded once, as the job-manager keeps it: every alloc request
            # for the job carries this text.
            jobspec_text = compact_json(jobspec)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"jobspec cannot travel in a message: {exc}") from exc
        job = Job(
            id=self._new_id(),
            jobspec=jobspec,
            userid=userid,
            urgency=urgency,
            priority=priority_from_urgency(urgency) if priority is None else priority,
            t_submit=self.broker.now,
            runtime=0.0,
            release=release,
        )
        job.jobspec_text = jobspec_text
        # What job-ingest commits before the job-manager hears of the job.
        self.broker.kvs.put_text(f"{JobID(job.id).kvs}.jobspec", _kvs_jobspec(job))
        if runtime is None:
            runtime = job.duration or self.default_runtime
        job.runtime = float(runtime)
        self.jobs[job.id] = job
        self._in_sched += 1
        self.broker.transcript.note(
            "event",
            "job-manager",
            Later("submit {0.f58} priority={1}", job, job.priority),
        )
        self._enqueue(job)
        self._recalc_pending()
        return job.id

    def add_running(
        self,
        R: dict,
        jobspec: dict,
        runtime: float | None = None,
        userid=1000,
        released=None,
        release: list | None = None,
    ):
        """A job that was already running when the scenario starts: its R
        is in the KVS and it will be reported in the scheduler's hello.

        With *released* (an idset or ranks of R), the job has already
        ended and housekeeping has freed those ranks: the job is INACTIVE,
        a later hello reports it with ``free`` (or, without ``partial-ok``,
        drops it), and its other ranks are freed by the *release* plan
        (``[delay, ranks]`` pairs, seconds from now), by default one rank
        every ``release_after`` seconds, or all together after *runtime*
        seconds if ``release_after`` is not set.
        """
        jobid = self.submit(jobspec, runtime=runtime, userid=userid, release=release)
        job = self.jobs[jobid]
        self.queue.discard(job)
        job.alloc_queued = False
        self.broker.kvs.put(f"{JobID(jobid).kvs}.R", R)
        self._start(job, copy.deepcopy(R))
        if released is not None:
            self._partially_released(job, sorted(IDset(released)))
        return jobid

    def _partially_released(self, job: Job, freed: list[int]) -> None:
        job._end_token += 1  # it has ended already: drop the scheduled end
        job.state, job.result, job.t_end = INACTIVE, "completed", self.broker.now
        self.stats["completed"] += 1
        self.housekeeping.adopt(job, freed)

    def cancel(self, jobid: int, note: str = "cancel by user") -> None:
        """The job's owner cancels it (``flux cancel``)."""
        self._fatal_exception(self.job(jobid), "cancel", note)

    def set_urgency(self, jobid: int, urgency: int) -> None:
        """``flux job urgency``: recompute the priority (0 holds the job)."""
        job = self.job(jobid)
        job.urgency = urgency
        self._set_priority(job, priority_from_urgency(urgency), oneshot=True)

    def prioritize(self, priorities: dict[int, int]) -> None:
        """A priority plugin reprioritizes several jobs at once."""
        changed = []
        for jobid, priority in priorities.items():
            job = self.job(jobid)
            if job.state == SCHED and job.priority != priority:
                self._set_priority(job, priority, oneshot=False)
                if job.alloc_pending:
                    changed.append([job.id, job.priority])
        if changed and self.online:
            self.broker.send_request(self.link, "sched.prioritize", {"jobs": changed})
        if self.limit:
            self._recalc_pending()

    def _set_priority(self, job: Job, priority: int, oneshot: bool) -> None:
        if job.state != SCHED:
            job.priority = priority
            return
        for table in (self.queue, self.sent):
            table.discard(job)
        job.priority = priority
        if job.alloc_pending:
            self.sent.add(job)
        self.broker.transcript.note(
            "event", "job-manager", f"priority {job.f58} -> {priority}"
        )
        if job.alloc_queued:
            if priority == PRIORITY_MIN:
                job.alloc_queued = False
            else:
                self.queue.add(job)
        elif not job.alloc_pending:
            self._enqueue(job)
        if job.alloc_pending:
            if priority == PRIORITY_MIN:
                self._send_cancel(job)
            elif oneshot and self.online:
                self.broker.send_request(
                    self.link, "sched.prioritize", {"jobs": [[job.id, priority]]}
                )
        if oneshot:
            self._recalc_pending()
        self._dirty = True

    def update_expiration(self, jobid: int, expiration: float) -> None:
        """Ask the scheduler to move a running job's expiration
        (``flux update JOBID duration=...``)."""
        job = self.job(jobid)
        if job.state != RUN:
            raise ValueError(f"job {job.f58} is not running")

        def done(msg):
            if msg.errnum and msg.errnum != errno.ENOSYS:
                self.broker.transcript.note(
                    "event", "job-manager", f"expiration update of {job.f58} refused"
                )
                return
            self._apply_expiration(job, expiration)

        if self.link is None:
            raise RuntimeError("no scheduler is loaded")
        self.broker.send_request(
            self.link,
            "sched.expiration",
            {"id": job.id, "expiration": float(expiration)},
            on_response=done,
        )

    def _apply_expiration(self, job: Job, expiration: float) -> None:
        job.expiration = expiration
        execution = job.R.get("execution")
        if isinstance(execution, dict):  # the scheduler's R may be anything
            execution["expiration"] = expiration
        self.broker.kvs.put(f"{JobID(job.id).kvs}.R", job.R)
        if job.state == RUN:
            self._schedule_end(job)

    # -- alloc queue ---------------------------------------------------------------

    def _enqueue(self, job: Job) -> None:
        if (
            job.state == SCHED
            and not job.alloc_queued
            and not job.alloc_pending
            and job.priority != PRIORITY_MIN
        ):
            self.queue.add(job)
            job.alloc_queued = True
            self._dirty = True

    def _recalc_pending(self) -> None:
        """Limited mode: withdraw outstanding requests that unsent jobs outrank."""
        if not self.limit or not self.online:
            return
        for head, tail in zip(self.queue, reversed(self.sent), strict=False):
            if job_order(head) < job_order(tail):
                self._send_cancel(tail)
            else:
                break

    def _send_cancel(self, job: Job) -> None:
        self.stats["withdrawn"] += 1
        self.broker.observer.cancel_sent(job)
        self.broker.send_request(self.link, "sched.cancel", {"id": job.id})

    def flush(self) -> bool:
        """Send the alloc requests that may go now; True if any went."""
        if not self._dirty:
            return False
        self._dirty = False
        sent_any = False
        while self.online and self.queue:
            if self.limit and len(self.sent) >= self.limit:
                break
            job = self.queue[0]
            if job.priority == PRIORITY_MIN:
                break
            del self.queue[0]
            job.alloc_queued = False
            job.alloc_pending = True
            self.sent.add(job)
            self.stats["alloc_sent"] += 1
            self.broker.observer.alloc_sent(job)
            self.broker.send_request(self.link, "sched.alloc", _alloc_payload(job))
            sent_any = True
        return sent_any

    def _requeue_pending(self, job: Job) -> None:
        if not job.alloc_pending:
            return
        self.sent.discard(job)
        job.alloc_pending = False
        self._enqueue(job)
        self._clear_annotations(job, "sched")

    # -- the scheduler interface ------------------------------------------------------

    def hello(self, link, msg) -> None:
        # flux-core unpacks "{s?b}" and, failing that, goes on without it:
        # only JSON true asks for partial-ok
        partial_ok = (msg.payload or {}).get("partial-ok") is True
        if not msg.flags & 2:  # FLUX_RPC_STREAMING
            self.broker.respond_error(link, msg, errno.EPROTO, "hello must stream")
            return
        # A new scheduler instance: the observer forgets the old one's
        # requests and counts ranks already down as known to it.
        self.broker.observer.scheduler_restarted()
        for job in sorted(self.jobs.values(), key=lambda j: j.id):
            if job.has_resources and not self.housekeeping.holds(job.id):
                self.broker.respond(link, msg, self._hello_payload(job))
        for job, freed in self.housekeeping.hello_entries(partial_ok):
            payload = self._hello_payload(job)
            if freed:
                payload["free"] = str(IDset(sorted(freed)))
            self.broker.respond(link, msg, payload)
        self.broker.respond_error(link, msg, errno.ENODATA)

    @staticmethod
    def _hello_payload(job: Job) -> dict:
        return {
            "id": job.id,
            "priority": job.priority,
            "userid": job.userid,
            "t_submit": job.t_submit,
        }

    def ready(self, link, msg) -> None:
        p = msg.payload or {}
        mode = p.get("mode")
        if mode == "limited":
            limit = p.get("limit")
            if not _is_integer(limit) or limit <= 0:
                self.broker.respond_error(link, msg, errno.EPROTO, "bad limit")
                return
            self.limit = limit
        elif mode == "unlimited":
            self.limit = 0
        else:
            self.broker.respond_error(link, msg, errno.EPROTO, f"bad mode {mode!r}")
            return
        self.online = True
        self.link = link
        self.broker.transcript.note("event", "job-manager", f"scheduler ready {mode}")
        self.broker.respond(link, msg, {"count": len(self.queue)})
        for job in list(self.jobs.values()):
            if job.free_pending:
                job.free_pending = False
                self.send_free(job, job.R, final=True)
        self._dirty = True

    def scheduler_disconnected(self, link) -> None:
        if self.link is link:
            self._teardown("disconnect")
            self.link = None

    def _teardown(self, reason: str) -> None:
        if not self.online:
            return
        self.broker.transcript.note(
            "event", "job-manager", f"scheduler interface stopped: {reason}"
        )
        for job in list(self.sent):
            self._requeue_pending(job)
        self.online = False

    def alloc_response(self, link, msg) -> None:
        observer = self.broker.observer
        if msg.errnum:
            observer.incident(
                "error-response",
                "alloc response with error "
                + errnum_text(msg.errnum, errstr=msg.errstr or ""),
            )
            self._teardown("alloc response error")
            return
        try:
            p = msg.payload
        except ValueError as exc:
            problem = f"the payload is not JSON flux-core reads ({exc})"
        else:
            problem = _alloc_response_problem(p)
        if problem is not None:
            observer.incident(
                "malformed-response", f"unparsable alloc response: {problem}"
            )
            self._teardown("alloc response error")
            return
        jobid, kind = p["id"], p["type"]
        known = self.jobs.get(jobid)
        job = known if known is not None and known.alloc_pending else None
        if not observer.alloc_response(jobid, kind, p, known, job):
            if kind not in (ALLOC_SUCCESS, ALLOC_ANNOTATE, ALLOC_DENY, ALLOC_CANCEL):
                self._teardown("alloc response error")
                return
        if kind == ALLOC_SUCCESS:
            R = p.get("R")
            if not isinstance(R, dict):
                self._teardown("SUCCESS without R (EPROTO)")
                return
            R.pop("scheduling", None)
            if job is None:
                # flux-core (alloc.c) frees at once the resources of a job it
                # no longer waits for, with a direct sched.free that does not
                # wait for the interface to be up.
                if self.link is not None:
                    self.send_free_R(jobid, R, final=True)
                return
            if job.has_resources:
                self._teardown("SUCCESS for a job that holds resources (EEXIST)")
                return
            self.sent.discard(job)
            job.alloc_pending = False
            # flux-core logs annotations that are not an object (EINVAL)
            # and starts the job all the same
            if isinstance(p.get("annotations"), dict):
                self._update_annotations(job, p["annotations"])
            self._start(job, R)
            self._dirty = True
        elif kind == ALLOC_ANNOTATE:
            if not isinstance(p.get("annotations"), dict):
                self._teardown("ANNOTATE without annotations (EPROTO)")
                return
            if job is not None:
                self._update_annotations(job, p["annotations"])
        elif kind == ALLOC_DENY:
            if job is None:
                return
            job.alloc_pending = False
            self.sent.discard(job)
            self._clear_annotations(job, None)
            note = p.get("note") or ""
            job.exceptions.append(("alloc", 0, note))
            job.result = "denied"
            self._finish(job, f"alloc denied: {note}")
            self._dirty = True
        elif kind == ALLOC_CANCEL:
            if job is None:
                return
            if job.state == SCHED:
                self._requeue_pending(job)
            else:
                self.sent.discard(job)
                self._clear_annotations(job, None)
            job.alloc_pending = False
            self._dirty = True
        else:
            self._teardown(f"unknown alloc response type {kind}")

    def raise_request(self, link, msg) -> None:
        """``job-manager.raise`` from a module (``job_raise_async``)."""
        p = msg.payload or {}
        # flux-core unpacks "{s:I s:i s:s s?s s?i}" (id, severity, type,
        # note, wait_status) and checks the severity, or answers EPROTO
        note = p.get("note", "")
        if (
            not _is_integer(p.get("id"))
            or not _is_integer(p.get("severity"))
            or not isinstance(p.get("type"), str)
            or not isinstance(note, str)
        ):
            self.broker.respond_error(link, msg, errno.EPROTO, "malformed request")
            return
        severity = p["severity"]
        if not 0 <= severity <= 7:
            self.broker.respond_error(
                link, msg, errno.EPROTO, "invalid exception severity"
            )
            return
        job = self.jobs.get(p["id"])
        if job is None:
            self.broker.respond_error(link, msg, errno.ENOENT, "unknown job")
            return
        job.exceptions.append((p["type"], severity, note))
        self.broker.transcript.note(
            "event",
            "job-manager",
            f"exception on {job.f58} type={p.get('type')} severity={severity}",
        )
        self.broker.respond(link, msg, {})
        if severity == 0:
            self._fatal_exception(job, p["type"], note)

    # -- annotations -----------------------------------------------------------------

    def _update_annotations(self, job: Job, update: dict) -> None:
        job.annotations = merge_annotations(job.annotations, update)

    def _clear_annotations(self, job: Job, key: str | None) -> None:
        if job.annotations is None:
            return
        if key is None:
            job.annotations = None
        else:
            job.annotations.pop(key, None)
            if not job.annotations:
                job.annotations = None

    # -- running and ending ----------------------------------------------------------------

    def _start(self, job: Job, R: dict) -> None:
        job.R = R
        job.has_resources = True
        self._in_sched -= 1
        job.state = RUN
        job.t_run = self.broker.now
        job.expiration = _expiration_of(R)
        self.stats["started"] += 1
        self.broker.observer.job_started(job)
        self._schedule_end(job)

    def _schedule_end(self, job: Job) -> None:
        end = job.t_run + job.runtime
        result = "completed"
        if job.expiration and end > job.expiration:
            end, result = max(job.expiration, self.broker.now), "timeout"
        job._end_token += 1
        token = job._end_token

        def ended():
            if job._end_token == token and job.state == RUN:
                job.result = result
                if result == "timeout":
                    job.exceptions.append(("timeout", 0, "resource allocation expired"))
                self._finish(job, result)

        if end <= self.broker.now:
            # Ends as it starts: after the scheduler's pass at this instant.
            self.broker.at_instant_end(ended)
        else:
            self.broker.at(end, ended)

    def _fatal_exception(self, job: Job, kind: str, note: str) -> None:
        if job.state == SCHED:
            if job.alloc_pending:
                # Leaving SCHED: the request is finalized at once (flux-core
                # alloc_cancel_alloc_request with finalize=true).
                self._send_cancel(job)
                job.alloc_pending = False
                self.sent.discard(job)
                self._clear_annotations(job, None)
            if job.alloc_queued:
                self.queue.discard(job)
                job.alloc_queued = False
            job.result = "canceled" if kind == "cancel" else "exception"
            self._finish(job, f"{kind}: {note}")
            self._recalc_pending()
            self._dirty = True
        elif job.state == RUN:
            job.result = "canceled" if kind == "cancel" else "exception"
            self._finish(job, f"{kind}: {note}")

    def _finish(self, job: Job, why: str) -> None:
        """The job leaves SCHED or RUN: release resources, become INACTIVE."""
        was_running = job.state == RUN
        if job.state == SCHED:
            self._in_sched -= 1
        job.state = CLEANUP
        job.t_end = self.broker.now
        self.broker.transcript.note(
            "event", "job-manager", Later("{0.f58} ends: {1}", job, why)
        )
        if was_running and job.has_resources:
            self.stats["completed"] += 1
            self.housekeeping.release(job)
        job.state = INACTIVE

    def send_free(self, job: Job, R: dict, final: bool) -> None:
        """Send ``sched.free``, or hold it back while the interface is down."""
        if not self.online:
            job.free_pending = True  # sent again when the scheduler is ready
            return
        self.send_free_R(job.id, R, final)
        if final:
            job.has_resources = False

    def send_free_R(self, jobid: int, R: dict, final: bool) -> None:
        """Send ``sched.free`` for *R* of job *jobid* now."""
        self.broker.observer.free_sent(jobid, R, final)
        self.broker.send_request(
            self.link, "sched.free", {"id": jobid, "R": R, "final": final}
        )
