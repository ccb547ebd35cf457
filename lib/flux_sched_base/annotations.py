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
    moves earlier by less than :data:`ESTIMATE_SLACK`, or by less than
    :data:`ESTIMATE_FRACTION` of the wait still ahead of it, is not sent
    again: the value sent is never earlier than the start held and later
    by less than the larger of the two (a promise "not after" stays true,
    and the estimate grows exact as the start comes near; see
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

import math
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

#: Share of the wait still ahead by which a held start may move earlier
#: without a new ``t_estimate``.  When one job ends early on a full
#: machine, conservative backfilling moves thousands of starts in a long
#: queue earlier by seconds to hours (10,000 queued: about 2,400 moves a
#: pass, median 60 s); an estimate a day away is not made more useful by a minute, and
#: each update is a message the job-manager processes and publishes.
ESTIMATE_FRACTION = 0.01

_UNSET = object()
INF = math.inf


class Annotations:
    """Remembers the ``sched`` annotations sent for each pending job."""

    def __init__(
        self,
        estimate_slack: float | None = None,
        estimate_fraction: float | None = None,
    ) -> None:
        self._sent: dict[int, dict[str, Any]] = {}
        #: Number of ANNOTATE responses sent, for statistics.
        self.updates = 0
        #: The earliest time at which a ``t_estimate`` sent that stood for
        #: a value asked by :attr:`estimate_fraction` alone stops standing
        #: (the caller sets it to ``inf`` to watch from then on): whether it
        #: stands depends on the time, so the same values asked again from
        #: then on may be sent.
        self.fraction_until = INF
        #: How many seconds earlier than the ``t_estimate`` sent a start
        #: may be without sending it again; default :data:`ESTIMATE_SLACK`.
        self.estimate_slack = (
            ESTIMATE_SLACK if estimate_slack is None else estimate_slack
        )
        #: The same as a share of the wait from now to the start; default
        #: :data:`ESTIMATE_FRACTION`.  With both 0 every change is sent.
        self.estimate_fraction = (
            ESTIMATE_FRACTION if estimate_fraction is None else estimate_fraction
        )

    def estimate_stands(
        self, jobid: int, start: float, now: float | None = None
    ) -> bool:
        """Does the ``t_estimate`` sent for *jobid* stand for *start*: not
        earlier than it, and later by less than :attr:`estimate_slack` or
        (when *now* is given) by less than :attr:`estimate_fraction` of
        ``start - now`` (or equal)?"""
        sent = self._sent.get(jobid)
        old = None if sent is None else sent.get("t_estimate")
        if old is None:
            return False
        if old == start:
            return True
        ahead = old - start
        if ahead < 0.0:
            return False  # later: always sent
        if ahead < self.estimate_slack:
            return True
        if now is None or not ahead < self.estimate_fraction * (start - now):
            return False
        self.fraction_until = min(self.fraction_until, self._until(start, ahead))
        return True

    def update(self, job, *, now: float | None = None, **values: Any) -> bool:
        """Set ``sched`` keys on a pending job, sending only what changed.

        A value of ``None`` deletes the key (sends JSON null) if it was
        set; deleting a key that was never sent sends nothing; a
        ``t_estimate`` the one sent stands for (:meth:`estimate_stands`) is
        not sent again.  Returns True if an ANNOTATE response was sent.

        Args:
            job: a :class:`flux.scheduler.PendingJob`.
            now: the time the values are worked out at (the pass's now);
                without it, a ``t_estimate`` stands only within
                :attr:`estimate_slack` seconds.
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
                if key == "t_estimate" and self.estimate_stands(job.jobid, value, now):
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

    def stands_until(self, jobid: int, start: float, reason_pending: str) -> float:
        """Until when (at the latest) the ``t_estimate`` and
        ``reason_pending`` sent for *jobid* stand for *start* and
        *reason_pending* (:meth:`estimate_stands`): ``inf`` while *start*
        stays as it is, if they are the same or the estimate is earlier by
        less than the slack; else the time from which the share of the
        wait no longer covers the difference, made a millisecond early
        (asking again too early only finds it still stands); ``-inf`` if
        they do not stand now."""
        sent = self._sent.get(jobid)
        if sent is None or sent.get("reason_pending") != reason_pending:
            return -INF
        old = sent.get("t_estimate")
        if old is None or old < start:
            return -INF
        ahead = old - start
        if ahead == 0.0 or ahead < self.estimate_slack:
            return INF
        if not self.estimate_fraction > 0.0:
            return -INF
        return self._until(start, ahead)

    def _until(self, start: float, ahead: float) -> float:
        """When the share of the wait to *start* stops covering an estimate
        *ahead* seconds later, made a millisecond early (asking again too
        early only finds it still stands)."""
        return start - ahead / self.estimate_fraction - 1e-3

    def standing(
        self, jobid: int, start: float, now: float, reason_pending: str
    ) -> float | None:
        """:meth:`stands_until`, if the ``t_estimate`` and
        ``reason_pending`` sent stand for *start* and *reason_pending* at
        *now* by it (and so by :meth:`estimate_stands`, recorded in
        :attr:`fraction_until` as that records them); None if they do not, or stand only within the
        millisecond before that time.  One look for the two questions a
        pass asks of a holder kept as it was."""
        until = self.stands_until(jobid, start, reason_pending)
        if not until > now:
            return None
        if until != INF:  # (stands by the share of the wait)
            self.fraction_until = min(self.fraction_until, until)
        return until

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
