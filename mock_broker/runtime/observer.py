"""The hooks through which a judge watches a mock broker run.

The mock broker records facts; it does not judge them.  Something that
wants to judge a run (the conformance kit's referee) subclasses
:class:`BrokerObserver` and attaches itself with
:meth:`~mock_broker.runtime.broker.MockBroker.attach_observer`.  The broker
and its job-manager model call these hooks at the points named below; the
default implementation records nothing except incidents, which it notes in
the transcript so that a run without a judge still shows them.
"""

from __future__ import annotations


class BrokerObserver:
    """No-op hooks called by the broker, the job-manager model and the
    resource service.  Override what you need."""

    def __init__(self, broker):
        self.broker = broker

    def incident(self, kind: str, text: str) -> None:
        """Something went wrong that the broker itself detected (a module
        exited with an error, a response to no open request, an error or
        unparsable alloc response).  *kind* is a stable name."""
        self.broker.transcript.note("event", "broker", f"{kind}: {text}")

    def note_seq(self, seq: int) -> None:
        """Transcript entry *seq* is a message from a module."""

    def alloc_sent(self, job) -> None:
        """The job-manager sent ``sched.alloc`` for *job*."""

    def cancel_sent(self, job) -> None:
        """The job-manager sent ``sched.cancel`` for *job*."""

    def alloc_response(self, jobid, kind, payload, known, pending) -> bool:
        """An alloc response of type *kind* arrived for *jobid*; *known* is
        the job record (or None), *pending* the record if its request is
        still open.  Return False to call the response invalid."""
        return True

    def job_started(self, job) -> None:
        """*job* now holds the R it was allocated."""

    def free_sent(self, jobid: int, R: dict, final: bool) -> None:
        """``sched.free`` was sent (or housekeeping released *R*)."""

    def ranks_down(self, ranks) -> None:
        """The resource service told the scheduler these ranks are down."""

    def ranks_up(self, ranks) -> None:
        """The resource service told the scheduler these ranks are up."""

    def scheduler_restarted(self) -> None:
        """A new scheduler instance said hello."""

    def quiescent(self) -> None:
        """Nothing is ready at the current virtual time."""


__all__ = ["BrokerObserver"]
