"""Stamp ``starttime`` and ``expiration`` on an allocated R.

RFC 20 R carries ``execution.starttime`` and ``execution.expiration``; the
job shell and ``flux job info`` read them, and a job is killed when its
expiration passes.  A scheduler sets both just before it answers an alloc
request with SUCCESS.  :func:`expiration_for` is the single rule used
everywhere in :mod:`flux_sched_base` for when a job ends, so that the plan
and the stamped R always agree.
"""

from __future__ import annotations

import math
import time

#: End time of a job that never ends in the plan (no duration, no instance
#: expiration).
NEVER = math.inf


def expiration_for(start: float, duration: float, instance_expiration: float) -> float:
    """Return the expiration to stamp on R for a job starting at *start*.

    The rule: ``start + duration``, bounded by the instance expiration when
    that is set (greater than zero).  A job with no duration (0) gets the
    instance expiration, or 0 ("none") when the instance has none either.

    Args:
        start: start time, seconds since the epoch.
        duration: the request's duration in seconds (0 means unlimited).
        instance_expiration: the instance's resource expiration
            (``pool.expiration``), 0 when it has none.
    """
    if duration > 0.0:
        end = start + duration
        if instance_expiration > 0.0:
            end = min(end, instance_expiration)
        return end
    if instance_expiration > 0.0:
        return instance_expiration
    return 0.0


def plan_end(expiration: float) -> float:
    """Map an R expiration to the end time a planner uses.

    An expiration of 0 means the job has no end: :data:`NEVER`.
    """
    return expiration if expiration > 0.0 else NEVER


def stamp(
    R, duration: float, instance_expiration: float, now: float | None = None
) -> float:
    """Set ``starttime`` and ``expiration`` on *R* and return the expiration.

    Args:
        R: the allocation (a :class:`~flux.resource.ResourcePool` or any object
            with ``set_starttime`` and ``set_expiration``).
        duration: the request's duration in seconds (0 means unlimited).
        instance_expiration: ``pool.expiration`` of the scheduler's pool.
        now: the start time; defaults to :func:`time.time`, which is the
            reactor's clock in a broker and the virtual clock under the mock
            broker.
    """
    start = time.time() if now is None else now
    expiration = expiration_for(start, duration, instance_expiration)
    R.set_starttime(start)
    R.set_expiration(expiration)
    return expiration
