"""Per-job ``sched`` annotation bookkeeping.

RFC 27 lets a scheduler attach annotations to a pending job (``ANNOTATE``
responses) and to its allocation (``SUCCESS``).  The job-manager merges
each update into the job's dictionary, and a JSON null deletes a key, so a
scheduler must remember what it sent: to send only what changed, and to
delete what is no longer true.  :class:`Annotations` does that for the
``sched`` keys this library uses:

``t_estimate``
    the start time the scheduler holds for the job (seconds since the
    epoch), present only while the scheduler holds it.  A held start that
    moves earlier by less than :data:`ESTIMATE_SLACK` is not sent again:
    the value sent is never earlier than the start held and at most that
    much later (a promise "not after" stays true; see
    :meth:`Annotations.estimate_stands`).
``reason_pending``
    why the job is not running yet.
``resource_summary``
    the allocated resources, sent with SUCCESS.
``selection_type``
    how the job was started, sent with SUCCESS: ``immediate`` (it was next
    in priority order and fit), ``reserved`` (it started through a
    reservation it held) or ``backfilled`` (it started ahead of a
    higher-priority job that is still waiting).
``backfill``
    sent with SUCCESS for a backfilled job only: the ``f58`` id of the
    highest-priority job still waiting, the one it started ahead of.  This
    is the key and value flux-core's ``sched-backfill`` sets, so tools and
    tests written for that module read it the same way.

``AllocRequest.success(R, annotations, clear=True)`` in flux-python nulls
every ``sched`` key previously sent with :meth:`AllocRequest.annotate`, so
the pending-state keys disappear when the job starts; this class only has
to forget the job at that point.
"""

from __future__ import annotations

from typing import Any

#: ``selection_type`` values.
IMMEDIATE = "immediate"
RESERVED = "reserved"
BACKFILLED = "backfilled"

#: ``reason_pending`` values used by the reference schedulers.
REASON_RESOURCES = "insufficient resources"
REASON_PRIORITY = "waiting for higher priority jobs"
REASON_NO_ESTIMATE = "insufficient resources (no start time can be estimated)"

#: Seconds a held start may move earlier without a new ``t_estimate``.
#: A queue whose head starts every few milliseconds moves the estimates
#: behind it by milliseconds each time; ``flux jobs`` shows them to the
#: second, and each update is a message the job-manager processes.
ESTIMATE_SLACK = 1.0

_UNSET = object()


class Annotations:
    """Remembers the ``sched`` annotations sent for each pending job."""

    def __init__(self, estimate_slack: float | None = None) -> None:
        self._sent: dict[int, dict[str, Any]] = {}
        #: Number of ANNOTATE responses sent, for statistics.
        self.updates = 0
        #: How much earlier than the ``t_estimate`` sent a start may be
        #: without sending it again (0: every change is sent); default
        #: :data:`ESTIMATE_SLACK`.
        self.estimate_slack = (
            ESTIMATE_SLACK if estimate_slack is None else estimate_slack
        )

    def estimate_stands(self, jobid: int, start: float) -> bool:
        """Does the ``t_estimate`` sent for *jobid* stand for *start*: not
        earlier than it and less than :attr:`estimate_slack` later (or
        equal)?"""
        sent = self._sent.get(jobid)
        old = None if sent is None else sent.get("t_estimate")
        return old is not None and (
            old == start or 0.0 <= old - start < self.estimate_slack
        )

    def update(self, job, **values: Any) -> bool:
        """Set ``sched`` keys on a pending job, sending only what changed.

        A value of ``None`` deletes the key (sends JSON null) if it was
        set; deleting a key that was never sent sends nothing; a
        ``t_estimate`` the one sent stands for (:meth:`estimate_stands`) is
        not sent again.  Returns True if an ANNOTATE response was sent.

        Args:
            job: a :class:`flux.scheduler.PendingJob`.
            values: ``key=value`` pairs, e.g. ``t_estimate=1767225700.0``.
        """
        sent = self._sent.get(job.jobid)
        changes = {}
        for key, value in values.items():
            old = _UNSET if sent is None else sent.get(key, _UNSET)
            if value is None:
                if old is not _UNSET:
                    changes[key] = None
            elif old is _UNSET or old != value:
                if key == "t_estimate" and self.estimate_stands(job.jobid, value):
                    continue
                changes[key] = value
        if not changes:
            return False
        if sent is None:
            sent = self._sent[job.jobid] = {}
        for key, value in changes.items():
            if value is None:
                sent.pop(key, None)
            else:
                sent[key] = value
        if not sent:
            del self._sent[job.jobid]
        job.request.annotate({"sched": changes})
        self.updates += 1
        return True

    def clear(self, job, *keys: str) -> bool:
        """Delete *keys* (default: every key sent) from a pending job."""
        sent = self._sent.get(job.jobid)
        if not sent:
            return False
        names = keys or tuple(sent)
        return self.update(job, **dict.fromkeys(names))

    def get(self, jobid: int, key: str, default: Any = None) -> Any:
        """The value last sent for *key* on *jobid*, or *default*."""
        return self._sent.get(jobid, {}).get(key, default)

    def annotated(self) -> list[int]:
        """Ids of the pending jobs that carry annotations sent by us."""
        return list(self._sent)

    def forget(self, jobid: int) -> None:
        """Drop the record of a job whose request was finalized."""
        self._sent.pop(jobid, None)

    def __len__(self) -> int:
        return len(self._sent)


def success_annotations(R, selection_type: str, backfill: str | None = None) -> dict:
    """The annotations to send with SUCCESS: resource summary and selection,
    and ``backfill`` (the waiting job's ``f58`` id) when it is given."""
    sched = {"resource_summary": R.dumps(), "selection_type": selection_type}
    if backfill is not None:
        sched["backfill"] = backfill
    return {"sched": sched}
