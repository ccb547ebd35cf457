"""Shared base library for Flux Python schedulers.

What the reference schedulers share, and what any policy author can use on
top of :class:`flux.scheduler.Scheduler`:

- :class:`~flux_sched_base.scheduler.PlanningScheduler`: a ``Scheduler``
  that keeps a planner in step with every RFC 27 event, with a priority
  queue, timed generator passes, annotations and statistics;
- :class:`~flux_sched_base.reservation.ReservationScheduler`: backfilling
  on reservations (depth 1 is EASY, unlimited is conservative), planned
  with node counts when every pending job takes whole nodes
  (:mod:`~flux_sched_base.counts`, :mod:`~flux_sched_base.counted`: the
  textbook definitions exactly), with the allocator otherwise;
- :class:`~flux_sched_base.planner.Planner`: running jobs and reservations
  over time, answering "earliest start" and "can this start now without
  delaying these reservations" with the pool's own allocator;
- :mod:`~flux_sched_base.annotations`, :mod:`~flux_sched_base.rstamp` and
  :mod:`~flux_sched_base.args`: ``sched`` annotations, ``starttime`` and
  ``expiration`` on R, and module arguments validated at load time.
- :mod:`~flux_sched_base.split_pool`: a resource pool any scheduler can
  load with ``pool-class=flux_sched_base.split_pool``: even splits over
  nodes with matching core and GPU ids (libEnsemble's ``split2fit`` and
  ``match_slots``).

It imports only flux-python, the standard library and sortedcontainers, so
a module built on it loads in a real Flux broker.
"""

from flux_sched_base.annotations import Annotations
from flux_sched_base.args import UNLIMITED, Option, choice, count_or_unlimited
from flux_sched_base.planner import Planner
from flux_sched_base.reservation import ReservationScheduler
from flux_sched_base.scheduler import PlanningScheduler

__all__ = [
    "UNLIMITED",
    "Annotations",
    "Option",
    "Planner",
    "PlanningScheduler",
    "ReservationScheduler",
    "choice",
    "count_or_unlimited",
]
