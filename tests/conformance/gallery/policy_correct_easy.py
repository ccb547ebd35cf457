"""The gallery's correct EASY backfilling: every policy clause passes
(it fails the protocol clauses it does not handle: see the README).

:class:`CountBackfill` is also the base of the policy gallery's faults (and
of :mod:`policy_correct_conservative`): backfilling with a reservation
depth, on the upstream :class:`flux.scheduler.Scheduler`, deciding with
counts.  It is correct where every unit it counts is alike and a job's size
is a count of them: one-core slots on single-core nodes or on a single
node (it counts cores there), or whole-node jobs (it counts nodes).  A job is expected to end at its start plus its time
limit.  Each pass takes the queue in order; a job starts now if it fits now
for its whole limit around the starts and reservations made so far,
otherwise it gets the earliest reservation that fits while fewer than
``depth`` jobs hold one (1: EASY; None: conservative, whose reservations
are kept from pass to pass and compressed, never moved later).  A job
holding a reservation is annotated with ``sched.t_estimate``.
"""

import bisect
import heapq
import math
import time

from flux.idset import IDset
from flux.resource import InfeasibleRequest, InsufficientResources
from flux.scheduler import Scheduler

CLAUSE = None
POLICY = "easy"


def count(R):
    """The nodes and cores of an R (a dict)."""
    lite = (R.get("execution") or {}).get("R_lite", [])
    ranks = sum(len(IDset(e.get("rank", ""))) for e in lite)
    cores = sum(
        len(IDset(e.get("rank", ""))) * len(IDset(e["children"].get("core", "")))
        for e in lite
    )
    return ranks, cores


class Profile:
    """Free nodes from *now* on, as breakpoints ``at`` and free counts."""

    def __init__(self, now, total):
        self.at, self.free = [now], [total]

    def add(self, start, end, nodes):
        """*nodes* more free (fewer if negative) from *start* to *end*."""
        start = max(start, self.at[0])
        if end <= start:
            return
        first = self._mark(start)
        last = len(self.at) if end == math.inf else self._mark(end)
        for i in range(first, last):
            self.free[i] += nodes

    def _mark(self, t):
        i = bisect.bisect_left(self.at, t)
        if i == len(self.at) or self.at[i] != t:
            self.at.insert(i, t)
            self.free.insert(i, self.free[i - 1])
        return i

    def earliest(self, nodes, limit):
        """The first breakpoint from which *nodes* stay free for *limit*."""
        at, free = self.at, self.free
        i = 0
        while i < len(at):
            end, k = at[i] + limit, i
            while k < len(at) and (k == i or at[k] < end) and free[k] >= nodes:
                k += 1
            if k == len(at) or (k > i and at[k] >= end):
                return at[i]
            i = k + 1
        return None


class CountBackfill(Scheduler):
    """Backfilling with :attr:`depth` reservations, by node (or core) counts."""

    #: Queued jobs that hold a reservation: 1 is EASY, None conservative.
    depth = 1
    #: Whether later jobs must fit around the reservations.
    respect_reservations = True

    def __init__(self, h, *args):
        super().__init__(h, *args)
        self.total = 0
        self.count_cores = True
        self.running = {}  # jobid -> (nodes, expected end)
        self.held = {}  # jobid -> reserved start
        self.announced = {}  # jobid -> t_estimate sent

    def resource_update(self):
        (nodes, cores), (down_nodes, down_cores) = (
            count(self.resources.to_dict()),
            count(self.resources.copy_down().to_dict()),
        )
        self.count_cores = nodes == 1 or cores == nodes
        self.total = cores - down_cores if self.count_cores else nodes - down_nodes

    def hello(self, jobid, priority, userid, t_submit, R):
        """A job running before a restart: its size and expected end (its
        R's expiration) count as a start of this module's would."""
        super().hello(jobid, priority, userid, t_submit, R)
        nodes, cores = count(R)
        end = (R.get("execution") or {}).get("expiration") or math.inf
        self.running[jobid] = (cores if self.count_cores else nodes, end)

    @staticmethod
    def size(job):
        rr = job.resource_request
        return rr.nnodes or rr.nslots, rr.duration if rr.duration > 0 else math.inf

    def may_start(self, now, limit, shadow):
        """Whether a job that fits now may start (EASY's head at *shadow*)."""
        return True

    def estimate(self, start):
        """The t_estimate announced for a reservation at *start*."""
        return start

    def schedule(self):
        now = time.time()
        profile = Profile(now, self.total)
        for nodes, end in self.running.values():
            profile.add(now, end, -nodes)
        queue = sorted(self._queue)
        held = self.held if self.depth is None else {}
        for job in queue:
            if job.jobid in held:
                nodes, limit = self.size(job)
                profile.add(held[job.jobid], held[job.jobid] + limit, -nodes)
        self.held, shadow, done = {}, None, set()
        for job in queue:
            nodes, limit = self.size(job)
            if nodes > self.total:
                job.request.deny(f"needs {nodes} nodes, the instance has {self.total}")
                done.add(job.jobid)
                continue
            if job.jobid in held:
                profile.add(held[job.jobid], held[job.jobid] + limit, nodes)
            start = profile.earliest(nodes, limit)
            if start is None:
                continue
            if start <= now and not self.may_start(now, limit, shadow):
                continue
            if start > now:
                if self.depth is not None and len(self.held) >= self.depth:
                    continue
                self.held[job.jobid] = start
                shadow = start if shadow is None else shadow
                if self.respect_reservations:
                    profile.add(start, start + limit, -nodes)
                self.announce(job, self.estimate(start))
                continue
            try:
                alloc = self.resources.alloc(job.jobid, job.resource_request)
            except (InsufficientResources, InfeasibleRequest) as exc:
                self.log.error(f"counts said {job.jobid} fits: {exc}")
                continue
            profile.add(now, now + limit, -nodes)
            self.running[job.jobid] = (nodes, now + limit)
            self.announced.pop(job.jobid, None)
            alloc.set_starttime(now)
            if limit < math.inf:
                alloc.set_expiration(now + limit)
            job.request.success(alloc)
            done.add(job.jobid)
        for job in queue:
            if job.jobid not in self.held and job.jobid not in done:
                self.announce(job, None)
        if done:
            self._queue = [j for j in self._queue if j.jobid not in done]
            heapq.heapify(self._queue)

    def announce(self, job, t_estimate):
        """Annotate *job* with *t_estimate* (None: remove it) if it changed."""
        if self.announced.get(job.jobid) != t_estimate:
            if t_estimate is None:
                self.announced.pop(job.jobid, None)
            else:
                self.announced[job.jobid] = t_estimate
            job.request.annotate({"sched": {"t_estimate": t_estimate}})

    def free(self, jobid, R, final=False):
        super().free(jobid, R, final)
        if final:
            self.running.pop(jobid, None)

    def cancel(self, jobid):
        super().cancel(jobid)
        self.held.pop(jobid, None)
        self.announced.pop(jobid, None)


def mod_main(h, *args):
    CountBackfill(h, *args).run()
