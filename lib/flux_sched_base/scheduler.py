"""PlanningScheduler: the base class of the reference schedulers.

:class:`PlanningScheduler` is a :class:`flux.scheduler.Scheduler` that
keeps a :class:`~flux_sched_base.planner.Planner` in step with every RFC 27
event and gives a policy what it needs to write a scheduling pass:

- the queue of pending jobs in priority order (``self._queue`` is a
  ``SortedKeyList``: index 0 is the highest-priority job, then submission
  order), with :meth:`PlanningScheduler.pending_jobs` to walk it while
  starting jobs;
- :meth:`PlanningScheduler.start` and :meth:`PlanningScheduler.deny` to
  finalize requests with the right annotations;
- :attr:`PlanningScheduler.annotations` to post ``t_estimate`` and
  ``reason_pending`` with only the changes sent;
- module arguments declared as :class:`~flux_sched_base.args.Option`
  objects and validated at load time;
- timing of each pass and planner figures in ``stats-get``.

A policy overrides :meth:`PlanningScheduler.plan`, a generator: it should
``yield`` after each job it did real work for (the base class hands control
back to the reactor at every yield, or once per
:attr:`PlanningScheduler.STARTS_PER_YIELD` jobs started in a row) and :meth:`PlanningScheduler.cheap_yield`
otherwise.  If an event arrives while a pass is suspended, flux-python
closes the pass and starts a new one; the planner's state is consistent at
every yield, so nothing is lost.
"""

from __future__ import annotations

import collections
import errno
import json
import math
import time
from collections.abc import Iterator

from flux.job import JobID
from flux.resource import InfeasibleRequest, ResourcePool
from flux.scheduler import PendingJob
from sortedcontainers import SortedKeyList

from flux_sched_base import args as argsmod
from flux_sched_base.annotations import BACKFILLED, Annotations, success_annotations
from flux_sched_base.answers import KnownIds
from flux_sched_base.jobspec import jobspec_problem
from flux_sched_base.lazy_min import LazyMin
from flux_sched_base.planner import Planner
from flux_sched_base.pool import Pool


def queue_order(job: PendingJob):
    """A job's position in the queue, as a sort key."""
    # Same order as PendingJob.__lt__ and the job-manager: priority
    # descending, then submission (job ids grow with submission).
    return (-job.priority, job.jobid)


def _duration_key(duration: float) -> float:
    """A duration as :meth:`PlanningScheduler.shortest_duration` orders it:
    no limit (0) is the longest."""
    return duration if duration > 0.0 else math.inf


def _shape(request):
    """A hashable key for requests with the same resource shape, or None."""
    try:
        return (
            repr(request.node_count),
            repr(request.slot_count),
            request.slot_size,
            request.gpu_per_slot,
            request.exclusive,
            None
            if request.constraint is None
            else json.dumps(request.constraint, sort_keys=True, default=str),
        )
    except (AttributeError, TypeError, ValueError):
        return None


class PlanningScheduler(KnownIds):
    """Base class for schedulers that plan with a :class:`Planner`.

    Subclasses set :attr:`queue_depth` (flux-python's attribute) and
    :attr:`options`, and override :meth:`plan`.  All allocations must go
    through :attr:`planner` (``planner.start_now`` or
    ``planner.start_reserved``) so that the plan and the pool agree.
    """

    #: Module arguments this class understands, besides the built-in
    #: ``queue-depth=``, ``log-level=`` and ``pool-class=``.  Subclasses add
    #: theirs; options of every class in the MRO are collected.
    options: tuple[argsmod.Option, ...] = ()

    #: flux-python's pool hook: :class:`~flux_sched_base.pool.Pool`, its
    #: ``Rv1Pool`` with the resource summary and R's idsets written in plain
    #: Python (``pool-class=`` still names another).
    pool_class = Pool

    #: Skipped jobs between two yields when a pass only does cheap checks.
    CHEAP_YIELD_EVERY = 64

    #: Work out afresh what a pass reuses from the one before (kept
    #: estimates, for example) and fail the pass if it differs; run the
    #: pass a quiet arrival would skip and fail it if it changes anything;
    #: check the pass's own bookkeeping where a policy can (tests).
    check_reuse = False

    #: Jobs a pass may start between two returns to the reactor: a yield
    #: that follows a start is passed on only after this many starts.  With
    #: 1 (the default) the pass returns after every start, and every
    #: message that arrives meanwhile ends it before it plans on a state
    #: about to change; with more, fewer reactor iterations and pass
    #: restarts, but in a burst of arrivals more passes run their planning
    #: to the end (8 cost conservative at unlimited depth 2.3x the CPU on
    #: 20,000 jobs).  schedkit-fifo and schedkit-easy, whose planning after
    #: the starts is bounded, set 8 (schedkit-conservative behind a bounded
    #: queue-depth).  Either way jobs started in a row share a KVS commit
    #: of R (:meth:`commit_now`).
    STARTS_PER_YIELD = 1

    def __init__(self, h, *args):
        super().__init__(h, *args)
        values = argsmod.consume(
            self._pending_args, argsmod.collect(type(self).__mro__)
        )
        for attribute, value in values.items():
            setattr(self, attribute, value)
        self._queue = SortedKeyList(key=queue_order)
        self._pending: dict[int, PendingJob] = {}
        self._needs: dict[int, tuple[int, int, int, int]] = {}
        self._min_needs = LazyMin()  # (cores needed, jobid)
        # (duration, jobid) of the pending jobs, no limit as infinity.
        self._durations = LazyMin()
        # Jobs with identical requests (shape and duration), each bucket in
        # priority order: a backfill scan only needs each bucket's first job.
        self._bucket_of: dict[int, tuple] = {}
        self._buckets: dict[tuple, SortedKeyList] = {}
        self._feasible: dict = {}
        # Whole nodes, and cores, each pending job takes (None: not a
        # request of that kind here), and how many pending jobs are not.
        self._whole: dict[int, int | None] = {}
        self._cores: dict[int, int | None] = {}
        self._not_whole = 0
        self._not_cores = 0
        # (units, jobid) of the jobs of each kind, for the fewest units.
        self._least = {"nodes": LazyMin(), "cores": LazyMin()}
        #: The plan; created when the first resources arrive.
        self.planner: Planner | None = None
        #: Annotation bookkeeping for pending jobs.
        self.annotations = Annotations()
        self._event = 0
        #: Counts the events other than arrivals (frees, cancels, priority,
        #: resource and expiration changes, hello): while it stays the
        #: same, resources have freed nowhere and no queued job moved up.
        self.plan_event = 0
        #: Counts the frees (of those events).
        self.frees = 0
        self._cheap = 0
        self._started = 0  # jobs started since the pass last yielded
        self._started_in_step = False
        self._starting = False  # the pass is suspended after a step that started
        self._last_pass_time = 0.0
        self._max_pass_time = 0.0
        self._passes_done = 0
        self._passes_aborted = 0
        self._total_pass_time = 0.0
        self._jobs_started = 0
        # jobid -> R_lite of the R sent with SUCCESS, until the final free
        self._granted: dict[int, list] = {}
        self._jobs_backfilled = 0
        self._jobs_denied = 0
        self._recent_passes: collections.deque = collections.deque(maxlen=32)
        # The event count when the last pass ran to its end with no event
        # during it (see arrival_is_quiet): None while there is no such
        # pass; and until when every t_estimate it left standing by a share
        # of the wait still stands (the same pass later may send them).
        self._settled_event: int | None = None
        self._settled_until = math.inf
        self._skip_request = False  # the next _request_schedule is for a quiet arrival
        # With check_reuse: what the pass after a quiet arrival must leave as it is.
        self._quiet_outcome: tuple | None = None
        self._arrivals_without_pass = 0
        if not self._subclass_defines_init():
            self._reject_unknown_args()

    def _subclass_defines_init(self) -> bool:
        # flux-python rejects leftover arguments only after the __init__ of
        # the instantiated class itself; a policy class without __init__
        # inherits ours, so we check here unless a subclass will.
        for klass in type(self).__mro__:
            if klass is PlanningScheduler:
                return False
            if "__init__" in klass.__dict__:
                return True
        return False

    # -- events -------------------------------------------------------------------

    def _changed(self, arrival: bool = False) -> None:
        # The planner's scratch copy follows every change made through the
        # planner (or is dropped by it); only a change behind its back must
        # drop it (hello).
        self._event += 1
        if not arrival:
            self.plan_event += 1
        self._quiet_outcome = None

    def resource_update(self):
        """Keep the planner's view of ranks, topology and capacity current."""
        if self.planner is None:
            self.planner = Planner(self.resources, self.log)
        else:
            self.planner.refresh_resources()
        self._feasible.clear()
        self._whole.clear()
        self._cores.clear()
        self._not_whole = self._not_cores = 0
        for least in self._least.values():
            least.clear()
        for job in self._pending.values():
            self._classify(job)
        self._changed()

    def _classify(self, job: PendingJob) -> None:
        rr = job.resource_request
        nodes = self._whole[job.jobid] = self.planner.whole_nodes(rr)
        cores = self._cores[job.jobid] = self.planner.core_count(rr)
        self._not_whole += nodes is None
        self._not_cores += cores is None
        if nodes is not None:
            self._least["nodes"].add((nodes, job.jobid))
        if cores is not None:
            self._least["cores"].add((cores, job.jobid))

    def _unclassify(self, jobid: int) -> None:
        for unit, units in (("nodes", self._whole), ("cores", self._cores)):
            n = units.pop(jobid)
            if n is None:
                if unit == "nodes":
                    self._not_whole -= 1
                else:
                    self._not_cores -= 1
            else:
                self._least[unit].remove((n, jobid))

    def whole_nodes(self, job: PendingJob) -> int | None:
        """Whole nodes *job* takes, or None if it is not a whole-node
        request on this machine (see :func:`flux_sched_base.counts.whole_nodes`)."""
        return self._whole[job.jobid]

    def count_unit(self) -> str | None:
        """``"nodes"`` if every pending job is a whole-node request,
        otherwise ``"cores"`` if every one is one-core slots that any free
        cores satisfy, otherwise None (see :mod:`flux_sched_base.counts`).
        A pass can then plan with counts of that unit alone."""
        if self._not_whole == 0:
            return "nodes"
        if self._not_cores == 0:
            return "cores"
        return None

    def counted_queue(self) -> bool:
        """True if a pass can plan with counts alone (:meth:`count_unit`)."""
        return self.count_unit() is not None

    def units(self, jobid: int) -> int | None:
        """Units of :meth:`count_unit` pending job *jobid* takes."""
        if self._not_whole == 0:
            return self._whole.get(jobid)
        return self._cores.get(jobid)

    def least_units(self) -> float:
        """Fewest units of :meth:`count_unit` any pending job takes
        (infinity if the queue is empty or not counted)."""
        unit = self.count_unit()
        least = self._least[unit].least() if unit else None
        return least[0] if least is not None else math.inf

    def count_profile(self):
        """Free units of :meth:`count_unit` over time, from the running
        jobs (:class:`~flux_sched_base.counts.NodeProfile`)."""
        if self._not_whole == 0:
            return self.planner.node_profile()
        return self.planner.core_profile()

    def count_free_now(self) -> int:
        """The ``free_now`` of :meth:`count_profile`, without building it."""
        return self.planner.releases.free_now(
            "nodes" if self._not_whole == 0 else "cores"
        )

    def hello(self, jobid, priority, userid, t_submit, R):
        """Register a running job and plan its end from R's expiration."""
        super().hello(jobid, priority, userid, t_submit, R)
        self.planner.add_running(jobid, R, R.expiration)
        self.planner.invalidate()  # R went into the pool behind the planner
        self._changed()

    def alloc(self, request, jobid, priority, userid, t_submit, jobspec):
        """Parse and queue a request; deny a malformed one (with a note
        naming what is wrong) and one that can never be satisfied."""
        settled = (
            self._event == self._settled_event and time.time() < self._settled_until
        )
        self._skip_request = False  # (left over only if a handler failed)
        self._changed(arrival=True)
        self.remember(request, jobid)
        problem = jobspec_problem(jobspec)
        if problem is not None:
            self.log.error(f"alloc: invalid jobspec for {jobid}: {problem}")
            self._jobs_denied += 1
            request.deny(f"invalid jobspec: {problem}")
            return
        try:
            rr = self.resources.parse_resource_request(jobspec)
        except Exception as exc:  # jobspec is untrusted input
            self.log.error(f"alloc: cannot parse jobspec for {jobid}: {exc}")
            self._jobs_denied += 1
            request.deny(f"cannot parse jobspec: {exc}")
            return
        shape = _shape(rr)
        error = self._infeasible(rr, shape)
        if error is not None:
            self._jobs_denied += 1
            request.deny(error)
            return
        job = PendingJob(jobid, priority, t_submit, request, rr)
        self._queue.add(job)
        self._pending[jobid] = job
        need = self.planner.need(rr)
        self._needs[jobid] = need
        self._min_needs.add((need[0], jobid))
        self._durations.add((_duration_key(rr.duration), jobid))
        key = (shape, rr.duration)
        if key[0] is None:
            key = ("unique", jobid)
        self._bucket_of[jobid] = key
        self._bucket_add(job)
        self._classify(job)
        if (
            settled
            # (flux-python's pass in progress, if any: a quiet arrival
            # follows a pass that ended, so there is none)
            and getattr(self, "_sched_generator", None) is None
            and self.arrival_is_quiet(job, time.time())
        ):
            self._settled_event = self._event
            if self.check_reuse:
                # Run the pass all the same, and fail it if it does anything.
                self._quiet_outcome = self._outcome()
            else:
                self._skip_request = True
                self._arrivals_without_pass += 1

    def arrival_is_quiet(self, job: PendingJob, now: float) -> bool:
        """Whether a pass run at *now*, with *job* just queued, would do
        nothing: start or deny no job, send no annotation, and leave every
        reservation and promise as it is.  Then the arrival gets no pass.

        Asked only when the last pass ran to its end, no event came during
        it or since but arrivals found quiet, and every ``t_estimate`` it
        left standing for a different start by a share of the wait (which
        depends on the time) still stands at *now*.  The default, False,
        gives every arrival a pass; a policy that knows when its pass cannot
        change may say True then (with ``check_reuse``, tests run the pass
        anyway and fail it if it changes anything).
        """
        return False

    def _outcome(self) -> tuple:
        """What a pass for a quiet arrival must leave unchanged (tests)."""
        planner = self.planner
        reservations = {
            jobid: (item.start, item.end, json.dumps(item.R.to_dict(), sort_keys=True))
            for jobid, item in planner.reservations.items()
        }
        return (
            self._jobs_started,
            self._jobs_denied,
            self.annotations.updates,
            reservations,
            dict(planner.promises),
        )

    def _request_schedule(self):
        # flux-python's: every event asks for a pass; a quiet arrival does not.
        if self._skip_request:
            self._skip_request = False
            return
        super()._request_schedule()

    def feasibility_check(self, msg, jobspec):
        """Refuse a malformed jobspec (EINVAL, naming what is wrong) before
        the base class checks the request against the whole pool."""
        problem = jobspec_problem(jobspec)
        if problem is not None:
            self.handle.respond_error(msg, errno.EINVAL, f"invalid jobspec: {problem}")
            return
        super().feasibility_check(msg, jobspec)

    def _bucket_add(self, job: PendingJob) -> None:
        key = self._bucket_of[job.jobid]
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = SortedKeyList(key=queue_order)
        bucket.add(job)

    def _bucket_remove(self, job: PendingJob) -> None:
        key = self._bucket_of[job.jobid]
        bucket = self._buckets[key]
        bucket.remove(job)
        if not bucket:
            del self._buckets[key]

    def _infeasible(self, request, key) -> str | None:
        # key: the request's _shape(), the feasibility cache's key
        if key is not None and key in self._feasible:
            return self._feasible[key]
        try:
            self.resources.check_feasibility(request)
            error = None
        except OSError as exc:
            error = str(exc) or "unsatisfiable request"
        if key is not None:
            self._feasible[key] = error
        return error

    def _handle_free(self, msg):
        # flux-python's sched.free handler (registered under this name by the
        # base class), which builds a pool from the message's R every time.
        # A final free of everything a job was granted (no partial free came
        # first) hands over the allocation itself instead: same resources,
        # none of the parsing.
        try:
            p = msg.payload
            jobid, final = p["id"], p.get("final", False)
            R = self._granted_allocation(jobid, p["R"]) if final else None
            if R is None:
                R = ResourcePool(p["R"])
            self.free(jobid, R, final=final)
            self._request_schedule()
        except Exception as exc:  # as flux-python: any failure stops the module
            self.log.error(f"free callback raised: {exc}")
            self.stop_error()

    def _granted_allocation(self, jobid: int, R: dict):
        """The allocation object of *jobid* if *R* is exactly what it was
        granted (its R_lite), else None."""
        granted = self._granted.pop(jobid, None)
        if granted is None or self.planner is None:
            return None
        item = self.planner.running.get(jobid)
        try:
            same = R["execution"]["R_lite"] == granted
        except (KeyError, TypeError):
            return None
        return item.R if same and item is not None else None

    def free(self, jobid, R, final=False):
        """Return resources to the pool and take the job out of the plan."""
        super().free(jobid, R, final)
        self.planner.release(jobid, R, final, time.time())
        self._changed()
        self.frees += 1

    def cancel(self, jobid):
        """Withdraw a pending request (user cancel or job-manager withdrawal)."""
        self._changed()
        job = self._pending.get(jobid)
        if job is None:
            return  # a repeated sched.cancel: already answered
        self._remove(job)
        job.request.cancel()

    def prioritize(self, jobs):
        """Apply new priorities.  A job whose priority rises loses its
        reservation and is placed again, as if it had just arrived."""
        self._changed()
        for jobid, priority in jobs:
            job = self._pending.get(jobid)
            if job is None or job.priority == priority:
                continue
            self._queue.remove(job)
            self._bucket_remove(job)
            if priority > job.priority:
                self.planner.drop(jobid)
            job.priority = priority
            self._queue.add(job)
            self._bucket_add(job)

    def expiration(self, msg, jobid, expiration):
        """Move a running job's planned end, then accept the update."""
        self._changed()
        self.planner.set_expiration(jobid, expiration)
        self.resources.update_expiration(jobid, expiration)
        self.handle.respond(msg, None)

    # -- finalizing requests ----------------------------------------------------------

    def _remove(self, job: PendingJob) -> None:
        self._queue.remove(job)
        self._bucket_remove(job)
        del self._bucket_of[job.jobid]
        del self._pending[job.jobid]
        self._unclassify(job.jobid)
        need = self._needs.pop(job.jobid)
        self._min_needs.remove((need[0], job.jobid))
        self._durations.remove(
            (_duration_key(job.resource_request.duration), job.jobid)
        )
        self.annotations.forget(job.jobid)
        if self.planner is not None:
            self.planner.drop(job.jobid)

    def start(self, job: PendingJob, R, selection_type: str) -> None:
        """Answer SUCCESS for a job the planner has just allocated *R* to.

        Sends ``resource_summary`` and ``selection_type``, and for a
        backfilled job ``backfill``, the ``f58`` id of the highest-priority
        job still waiting (as flux-core's ``sched-backfill`` does); flux-python's
        ``success(clear=True)`` nulls the pending-state keys sent before.
        """
        self._remove(job)
        self._jobs_started += 1
        self._started += 1
        self._started_in_step = True
        backfill = None
        if selection_type == BACKFILLED:
            self._jobs_backfilled += 1
            if self._queue:
                backfill = self._f58(self._queue[0].jobid)
        granted = R.to_dict()
        self._granted[job.jobid] = granted["execution"]["R_lite"]
        job.request.success(granted, success_annotations(R, selection_type, backfill))

    def _f58(self, jobid: int) -> str:
        # Backfilled jobs name the same waiting head, many in a row.
        last = self.__dict__.get("_last_f58")
        if last is None or last[0] != jobid:
            last = self._last_f58 = (jobid, JobID(jobid).f58)
        return last[1]

    def deny(self, job: PendingJob, error: Exception | str) -> None:
        """Deny a request that can never be satisfied."""
        self._remove(job)
        self._jobs_denied += 1
        job.request.deny(str(error) or "unsatisfiable request")

    def min_need(self) -> int | None:
        """Fewest cores any pending job needs (None if the queue is empty)."""
        least = self._min_needs.least()
        return None if least is None else least[0]

    def shortest_duration(self) -> float | None:
        """Shortest duration any pending job asks for (0: none asks for a
        limit, so the shortest is unlimited; None if the queue is empty)."""
        least = self._durations.least()
        if least is None:
            return None
        return 0.0 if least[0] == math.inf else least[0]

    def need(self, job: PendingJob) -> tuple[int, int, int, int]:
        """Lower bounds on what *job* needs (see ``Planner.need``)."""
        return self._needs[job.jobid]

    def identical_groups(self, after) -> list[tuple[tuple, PendingJob]]:
        """``(group key, first job after *after*)`` for each group of jobs
        with identical requests (same shape and duration), in priority
        order of those first jobs.

        *after* is a queue key (:func:`queue_order`) or None for the whole
        queue.  Identical requests fit or not alike, so a scan for jobs
        that fit now need only try each group's first job, and the group's
        next one (:meth:`next_identical`) when one starts.
        """
        heads = []
        for key in self._buckets:
            job = self.next_identical(key, after)
            if job is not None:
                heads.append((key, job))
        heads.sort(key=lambda kj: queue_order(kj[1]))
        return heads

    def identical_group_count(self) -> int:
        """How many groups of identical requests the queue holds (what
        :meth:`identical_groups` costs to list)."""
        return len(self._buckets)

    def next_identical(self, key: tuple, after) -> PendingJob | None:
        """The first job of group *key* after queue key *after*."""
        bucket = self._buckets.get(key)
        if bucket is None:
            return None
        index = 0 if after is None else bucket.bisect_key_right(after)
        return bucket[index] if index < len(bucket) else None

    # -- passes -----------------------------------------------------------------------

    def pending_jobs(self, chunk: int = 256, start: int = 0) -> Iterator[PendingJob]:
        """Pending jobs in priority order, safe while jobs are started,
        from the *start*-th on.

        Reads the queue a chunk at a time, so a pass that stops early does
        not pay for the whole queue: the first chunk is small (most passes
        look at the head and a few behind it), the next ones *chunk* long.
        Jobs finalized while the walk is suspended are skipped.
        """
        index = start
        queue = self._queue
        size = min(16, chunk)
        while True:
            batch = list(queue.islice(index, index + size))
            if not batch:
                return
            before = len(queue)
            for job in batch:
                if job.jobid in self._pending:
                    yield job
            index += len(batch) - (before - len(queue))
            size = chunk

    def cheap_yield(self) -> bool:
        """Count a cheap step; True when the pass should yield now."""
        self._cheap += 1
        if self._cheap >= self.CHEAP_YIELD_EVERY:
            self._cheap = 0
            return True
        return False

    def plan(self) -> Iterator[None]:
        """One scheduling pass (a generator); policies override this."""
        return iter(())

    def schedule(self):
        """Run :meth:`plan` as a generator pass, timing the work it does."""
        if self.planner is None:
            return None
        return self._timed(self.plan())

    def commit_now(self, waiting: int) -> bool:
        """Commit the R of *waiting* started jobs now, unless the pass is
        suspended right after starting a job and fewer than
        :attr:`~flux_sched_base.answers.KnownIds.COMMIT_BATCH` wait: the
        next step is then likely to start one more, and their R share a
        commit.  A step that starts nothing, the end of the pass and a
        message that ends it all commit what waits."""
        return not self._starting or waiting >= self.COMMIT_BATCH

    def _timed(self, gen: Iterator[None]):
        event = self._event
        self.annotations.fraction_until = math.inf
        elapsed = 0.0
        t0 = time.perf_counter()
        self._started, self._started_in_step = 0, False
        try:
            for _ in gen:
                if self._started_in_step and self._started < self.STARTS_PER_YIELD:
                    self._started_in_step = False
                    continue
                # A step that started a job is likely followed by another:
                # their R can share a commit (commit_now).
                self._starting = self._started_in_step
                self._started, self._started_in_step = 0, False
                elapsed += time.perf_counter() - t0
                yield
                t0 = time.perf_counter()
                if self._event != event:
                    # Something changed while suspended and the queue went
                    # empty (flux-python only restarts a pass if it is not).
                    self._passes_aborted += 1
                    return
            elapsed += time.perf_counter() - t0
        except GeneratorExit:
            self._passes_aborted += 1
            raise
        finally:
            self._starting = False
            gen.close()
        self._passes_done += 1
        # (Ended, not cut short: no event came after its last yield.)
        self._settled_event = event
        self._settled_until = self.annotations.fraction_until
        expected, self._quiet_outcome = self._quiet_outcome, None
        if expected is not None:
            assert self._outcome() == expected, (
                "a pass for a quiet arrival changed the plan"
            )
        self._total_pass_time += elapsed
        self._recent_passes.append(elapsed)
        self._last_pass_time = elapsed
        self._max_pass_time = max(self._max_pass_time, elapsed)

    def stats_get(self):
        """flux-python's statistics plus planner figures.

        flux-python's fields include ``pending_jobs`` (the queue length).
        Added fields: ``running_jobs``, ``reserved_jobs``, ``profile_size``
        (breakpoints in the usage profile), ``allocator_probes`` (these four
        once resources have arrived), ``last_pass_time``,
        ``mean_pass_time`` and ``max_pass_time`` (seconds of work in a
        completed pass, measured with :func:`time.perf_counter`),
        ``recent_pass_times`` (the last 32 of them, oldest first),
        ``passes_completed``, ``passes_aborted``, ``jobs_started``,
        ``jobs_backfilled`` (started ahead of a higher-priority waiting
        job), ``jobs_denied``, ``annotations_sent``,
        ``arrivals_without_pass`` (jobs whose arrival asked for no pass:
        :meth:`arrival_is_quiet`), ``r_commits`` (KVS
        commits of started jobs' R: jobs started in a row share one, up to
        eight), and
        the values of this scheduler's own module arguments.
        """
        stats = super().stats_get()
        if self.planner is not None:
            stats.update(self.planner.stats())
        done = self._passes_done
        stats.update(
            {
                "last_pass_time": self._last_pass_time,
                "mean_pass_time": self._total_pass_time / done if done else 0.0,
                "max_pass_time": self._max_pass_time,
                "recent_pass_times": list(self._recent_passes),
                "passes_completed": self._passes_done,
                "passes_aborted": self._passes_aborted,
                "jobs_started": self._jobs_started,
                "jobs_backfilled": self._jobs_backfilled,
                "jobs_denied": self._jobs_denied,
                "annotations_sent": self.annotations.updates,
                "arrivals_without_pass": self._arrivals_without_pass,
                "r_commits": self.r_commits,
            }
        )
        for opt in argsmod.collect(type(self).__mro__):
            stats[opt.attribute] = argsmod.format_value(getattr(self, opt.attribute))
        return stats


__all__ = ["PlanningScheduler", "InfeasibleRequest"]
