"""schedkit-easy: EASY backfill scheduler for Flux.

The full EASY rule of Mu'alem and Feitelson (2001).  The first job in
priority order that cannot start gets a reservation: a start time (the
shadow time, ``sched.t_estimate``) and the amount of resources it will get
then; which ones is decided when it starts.  A later job may start now if
it fits now and either ends before the shadow time or uses only resources
the reservation does not need.  On machines of identical single-core nodes,
and for whole-node jobs, start times are exactly those of the textbook
definition.  (Applying only
the first clause, as flux-core's ``sched-backfill`` does, misses backfills
such as a long one-node job on a node the head will not use.)

The shadow time only moves earlier (when jobs end before their time
limit), except when a higher-priority job arrives (it takes the
reservation), a running job's expiration is extended, or resources go
down.  Running jobs are planned to end at their
expiration; a job without a time limit never ends in the plan, and a job
without a time limit can be backfilled only on resources the reservation
does not need.

A site makes it the instance's scheduler with ``flux-schedkit site-config``
and ``[modules.alternatives] sched = "schedkit-easy"`` (see the docs'
site page: the broker's Python then finds this library without PYTHONPATH).
By hand, in a broker whose Python can import ``flux_sched_base``, load with::

    flux module load $(flux-schedkit path easy) [queue-depth=N|unlimited]
        [log-level=LEVEL]

``queue-depth`` (default unlimited): a backfilling scheduler must see its
queue: a job the job-manager has not sent can never be backfilled.  A pass
stops scanning as soon as too little is free for any queued job, so a long
queue costs little when the machine is full.
"""

from flux_sched_base import ReservationScheduler


class EasyScheduler(ReservationScheduler):
    """EASY backfilling: one reservation, for the head of the queue."""

    queue_depth = "unlimited"
    reservation_depth = 1
    # Its planning after the starts is one reservation and a scan that
    # stops when too little is free: eight starts share a step.
    STARTS_PER_YIELD = 8


def mod_main(h, *args):
    EasyScheduler(h, *args).run()
