"""schedkit-conservative: conservative backfill scheduler for Flux.

Every queued job, up to ``reservation-depth`` in priority order, holds a
reservation: a start time (``sched.t_estimate``) and the amount of
resources it will get then; which ones is decided when it starts.  A job
starts early only if it delays no reservation.  With the default
unlimited depth, reservations are kept from pass to pass and only move earlier
(compression, when jobs end before their time limit); a job's reservation
moves later only when a higher-priority job arrives (or rises in
priority), a running job's expiration is extended, or resources go down.
Jobs past the depth may start now if they delay no reservation, as in EASY
(reservation-depth=1 is EASY; a depth N in between is a hybrid).  On
machines of identical single-core nodes, and for whole-node jobs, start
times are exactly those of the textbook definitions (Mu'alem and
Feitelson's compression for unlimited depth; reservations placed afresh
on every pass for a finite one).

A site makes it the instance's scheduler with ``flux-schedkit site-config``
and ``[modules.alternatives] sched = "schedkit-conservative"`` (see the docs'
site page: the broker's Python then finds this library without PYTHONPATH).
By hand, in a broker whose Python can import ``flux_sched_base``, load with::

    flux module load $(flux-schedkit path conservative)
        [reservation-depth=N|unlimited] [queue-depth=N|unlimited]
        [log-level=LEVEL]

``reservation-depth`` (default unlimited): conservative backfilling as
defined gives every job a reservation, so every user sees a start time
that can only improve.  Each pass revisits every reservation, so on very
long queues a bound (e.g. 64) keeps passes short at the price of
guarantees for jobs past it.

``queue-depth`` (default unlimited): reservations are only as good as the
queue the scheduler sees; a job the job-manager has not sent can neither
hold a reservation nor be backfilled.
"""

from flux_sched_base import UNLIMITED, Option, ReservationScheduler, count_or_unlimited

#: The largest queue-depth at which a pass starts eight jobs a step.
BOUNDED_QUEUE = 64


class ConservativeScheduler(ReservationScheduler):
    """Conservative backfilling: a reservation for every queued job."""

    queue_depth = "unlimited"
    options = (
        Option(
            "reservation-depth",
            "reservation_depth",
            UNLIMITED,
            count_or_unlimited(minimum=1),
            "number of queued jobs that hold a reservation",
        ),
    )

    def __init__(self, h, *args):
        super().__init__(h, *args)
        # A pass plans every job the job-manager has sent.  With a bounded
        # queue-depth that is a few jobs, so eight starts share a step (fewer
        # returns to the reactor), as in fifo and easy; unbounded, one a
        # step: with eight, passes in a burst of arrivals reached their
        # planning more often (2.3x the CPU time on 20,000 jobs).
        depth = self.queue_depth
        if depth != "unlimited" and depth <= BOUNDED_QUEUE:
            self.STARTS_PER_YIELD = 8


def mod_main(h, *args):
    ConservativeScheduler(h, *args).run()
