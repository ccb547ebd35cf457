"""The referee: checks every alloc-protocol message against RFC 27 and the
resource state, and reports violations with the transcript around them.

Each check has a stable name (the ``kind`` of a :class:`Violation`), used by
tests and the conformance kit:

``unknown-response-type``, ``response-unknown-job``,
``second-final-response``, ``annotation-after-final``,
``annotate-without-annotations``, ``success-without-R``,
``success-without-kvs-R``, ``R-nonexistent-resources``,
``R-down-resources``, ``R-overlap``, ``R-does-not-match-request``,
``R-violates-constraint``, ``R-times-wrong``, ``t-estimate-not-absolute``,
``stale-annotation``, ``unrequested-cancel``, ``unanswered-cancel``,
``error-response``, ``malformed-response``, ``free-answered``,
``response-unknown-request``, ``module-exited``.

What a request means is what flux-python's ``Rv1Pool`` reads from it
(:class:`~flux.resource.Rv1Pool.ResourceRequest`); :func:`request_problems`
holds an R to it exactly, and never faults what ``Rv1Pool`` itself
allocates.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from mock_broker import flux_substitute

flux_substitute.install()

from flux.idset import IDset  # noqa: E402
from flux.job import JobID  # noqa: E402
from flux.resource import Rv1Set  # noqa: E402
from flux.resource.Rv1Pool import ResourceRequest  # noqa: E402

from mock_broker.jobmanager.jobs import (  # noqa: E402
    IdsOutOfRange,
    R_lite_entries,
    idset_members,
    ranks_of,
)
from mock_broker.runtime.observer import BrokerObserver  # noqa: E402


@dataclass(frozen=True)
class Violation:
    """One broken rule, where it happened, and the transcript around it."""

    kind: str
    text: str
    time: float
    seq: int
    excerpt: str

    def __str__(self) -> str:
        return (
            f"[{self.kind}] at t={self.time:.3f}: {self.text}\n"
            f"transcript around #{self.seq}:\n{self.excerpt}"
        )


class RefereeError(AssertionError):
    """Raised by :meth:`Referee.assert_clean` when violations were found."""


#: A ``sched.t_estimate`` this many seconds before the current virtual time
#: is still accepted (an estimate computed a moment ago).
T_ESTIMATE_TOLERANCE = 1.0

#: Pending-state annotations that must be gone once a job has started.
PENDING_KEYS = ("t_estimate", "reason_pending")


class _Nonexistent(ValueError):
    """R names ranks, cores or GPUs beyond the machine (the text says which)."""


def _rank_children(R: dict, machine=None) -> dict[int, tuple[frozenset, frozenset]]:
    """Rank -> (cores, gpus) of an Rv1 object.

    With *machine*, ranks, cores and GPUs are bounded by it before they
    are expanded: beyond it, :class:`_Nonexistent` says which (for cores
    and GPUs, beyond every node of the machine).  An R that cannot be
    read raises :class:`ValueError` or :class:`TypeError`.
    """
    rank_bound = core_bound = gpu_bound = None
    if machine is not None:
        rank_bound = machine.size
        core_bound = machine.most_cores
        gpu_bound = machine.most_gpus
    held: dict[int, tuple[frozenset, frozenset]] = {}
    for entry in R_lite_entries(R):
        try:
            ranks = idset_members(entry.get("rank", ""), rank_bound)
        except IdsOutOfRange as exc:
            raise _Nonexistent(f"ranks {exc.outside} that do not exist") from None
        children = entry.get("children") or {}
        if not isinstance(children, dict):
            raise ValueError(f"rank {_ranks_text(ranks)}: children is not an object")
        cores = _children_of(children, "core", core_bound, ranks)
        gpus = _children_of(children, "gpu", gpu_bound, ranks)
        for rank in ranks:
            held[rank] = (cores, gpus)
    return held


def _children_of(children: dict, kind: str, bound, ranks) -> frozenset:
    try:
        return idset_members(children.get(kind, ""), bound)
    except IdsOutOfRange as exc:
        raise _Nonexistent(
            f"{kind}s {exc.outside} on ranks {_ranks_text(ranks)}, which no node has"
        ) from None


def _ranks_text(ranks) -> str:
    """Ranks (a set of ids) as an RFC 22 string, for a message."""
    return str(IDset(sorted(ranks)))


class _JobName:
    """A job's f58 id in a message, encoded only if a message is written."""

    __slots__ = ("jobid",)

    def __init__(self, jobid):
        self.jobid = jobid

    def __str__(self) -> str:
        jobid = self.jobid
        if isinstance(jobid, int) and jobid >= 0:
            return JobID(jobid).f58
        return str(jobid)

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)


def _in_count(n: int, count) -> bool:
    """True if *n* is a value the RFC 14 count (a ResourceCount) allows."""
    if n < count.min or (count.max is not None and n > count.max):
        return False
    return count._values is None or n in count._values


def _describe_count(count) -> str:
    if count._values is not None:
        return f"one of {count._values}"
    if count.max == count.min:
        return str(count.min)
    return f"{count.min}-{'' if count.max is None else count.max}"


def _slots_on(cores: frozenset, gpus: frozenset, size: int, gpus_per_slot: int):
    """How many whole slots one rank's share holds, or a problem."""
    ncores, ngpus = len(cores), len(gpus)
    slots = ncores // size
    if ncores % size:
        return slots, (
            f"{ncores} cores are not a whole number of {size}-core slots "
            "(a slot split across ranks)"
        )
    if slots == 0:
        return 0, f"no cores ({ngpus} gpus)"
    if ngpus != slots * gpus_per_slot:
        if not gpus_per_slot:
            return slots, f"{ngpus} gpus, none requested"
        return slots, f"{ngpus} gpus for {slots} slots of {gpus_per_slot} gpus"
    return slots, None


def request_problems(request: ResourceRequest, children: dict, machine) -> list[str]:
    """What is wrong with R (*children*: rank -> (cores, gpus)) for *request*.

    Node-level requests need a node count the request allows and, on each
    node, a whole number of slots within the per-node slot count (each slot
    with exactly its cores and GPUs), or the whole node if the request is
    exclusive.  Slot-only requests need each rank's share to be whole slots
    (a slot is never split across ranks) and a total slot count the request
    allows.  Constraints are judged separately (``R-violates-constraint``).
    """
    problems = []
    size, gpus_per_slot = request.slot_size, request.gpu_per_slot
    if request.node_count is not None:
        if not _in_count(len(children), request.node_count):
            problems.append(
                f"{len(children)} nodes where "
                f"{_describe_count(request.node_count)} were requested"
            )
        for rank, (cores, gpus) in sorted(children.items()):
            if request.exclusive:
                try:
                    group = machine.group_of(rank)
                except IndexError:
                    continue  # R-nonexistent-resources says it
                # (Rv1Pool does not check that a slot fits an exclusive node.)
                if len(cores) != group.cores or len(gpus) != group.gpus:
                    problems.append(
                        f"rank {rank}: {len(cores)} of {group.cores} cores and "
                        f"{len(gpus)} of {group.gpus} gpus, but the request is "
                        "for exclusive (whole) nodes"
                    )
                continue
            slots, problem = _slots_on(cores, gpus, size, gpus_per_slot)
            if problem is None and not _in_count(slots, request.slot_count):
                problem = (
                    f"{slots} slots where {_describe_count(request.slot_count)} "
                    "per node were requested"
                )
            if problem is not None:
                problems.append(f"rank {rank}: {problem}")
        return problems
    total = 0
    for rank, (cores, gpus) in sorted(children.items()):
        slots, problem = _slots_on(cores, gpus, size, gpus_per_slot)
        total += slots
        if problem is not None:
            problems.append(f"rank {rank}: {problem}")
    if not problems and not _in_count(total, request.slot_count):
        problems.append(
            f"{total} slots of {size} cores"
            + (f" and {gpus_per_slot} gpus" if gpus_per_slot else "")
            + f" where {_describe_count(request.slot_count)} were requested"
        )
    return problems


def t_estimate_problem(value, now: float, epoch: float) -> str | None:
    """Why *value* is not an absolute ``sched.t_estimate`` at *now*, if so."""
    if value is None:
        return None  # JSON null deletes the key
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"is {value!r}, not a number"
    if not math.isfinite(value):
        return f"is {value!r}, not a finite time"
    if epoch > 0 and value < epoch / 2:
        return f"is {value:g}, which looks like a duration, not an epoch time"
    if value < now - T_ESTIMATE_TOLERANCE:
        return f"is {value:.3f}, {now - value:.3f} s in the past"
    return None


def _number(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        value = float(value)
    except OverflowError:
        return None
    return value if math.isfinite(value) else None


def R_times_problem(
    execution, now: float, duration: float, instance_expirations=(0.0,)
) -> str | None:
    """Why the ``starttime`` and ``expiration`` of an R granted at *now*
    are wrong for a job asking for *duration* seconds (0: none), if so.

    flux-core 0.88's job-exec kills a job when its R's expiration passes,
    and enforces no limit when it is 0.  So with a duration, the expiration
    is the start plus the duration, or earlier only where the instance
    itself expires (*instance_expirations*: every value it has had, 0 for
    none); without one, it is 0 or the instance's expiration.  A non-zero
    ``starttime`` is the time of the grant (0 is accepted: job-exec then
    starts the clock when the job starts).
    """
    execution = execution if isinstance(execution, dict) else {}
    tol = T_ESTIMATE_TOLERANCE
    start = _number(execution.get("starttime", 0.0))
    expiration = _number(execution.get("expiration", 0.0))
    if start is None or start < 0:
        return f"R's starttime is {execution.get('starttime')!r}, not a time"
    if expiration is None or expiration < 0:
        return (
            f"R's expiration is {execution.get('expiration')!r}: flux-core's "
            "job-exec refuses to run the job"
        )
    if start and abs(start - now) > tol:
        return f"R's starttime is {start:.3f}, granted at {now:.3f}"
    base = start or now
    ends = [e for e in instance_expirations if e > 0]
    if duration > 0:
        if expiration == 0:
            return (
                f"R has no expiration (0) for a job with a {duration:g} s time "
                "limit: flux-core's job-exec enforces no limit, and the job may "
                "run for ever"
            )
        latest = base + duration
        earliest = min([latest, *ends])
        if expiration > latest + tol:
            return (
                f"R's expiration {expiration:.3f} is {expiration - base:.3f} s "
                f"after the start, past the job's {duration:g} s time limit"
            )
        if expiration < earliest - tol:
            return (
                f"R's expiration {expiration:.3f} is {expiration - base:.3f} s "
                f"after the start, short of the job's {duration:g} s time limit "
                "(the job is killed early)"
            )
        return None
    if expiration and not any(abs(expiration - e) <= tol for e in ends):
        return (
            f"R's expiration {expiration:.3f} is {expiration - base:.3f} s after "
            "the start, for a job with no time limit (it is killed then)"
        )
    return None


class Referee(BrokerObserver):
    """Watches the job-manager/scheduler conversation of one broker.

    Create it with :meth:`attach`; the broker then calls its hooks (see
    :class:`~mock_broker.runtime.observer.BrokerObserver`).
    """

    @classmethod
    def attach(cls, broker) -> Referee:
        """Watch *broker* from now on and return the referee."""
        return broker.attach_observer(cls(broker))

    def __init__(self, broker):
        super().__init__(broker)
        self.violations: list[Violation] = []
        self._last_seq = 0
        self._open: set[int] = set()  # job ids with an alloc request open
        self._cancels: dict[int, int] = {}  # job id -> seq of the first cancel
        self._reported_unanswered: set[int] = set()
        self._held: dict[int, dict[int, tuple[frozenset, frozenset]]] = {}
        self._checked: dict[int, dict] = {}  # job id -> R parsed at SUCCESS
        self._requests: dict[int, ResourceRequest] = {}  # parsed jobspecs
        self._down_since: dict[int, int] = {}  # rank -> scheduler iteration
        self._instance = None  # Rv1Set of the instance, for constraints
        #: Every expiration the instance has had (0: none), oldest first.
        self._instance_expiration = [broker.resources.expiration]
        #: What it has seen, by :data:`~conformance.clauses.OCCASIONS` key:
        #: a clause about it says something only once it was seen.
        self.seen: set[str] = set()

    # -- reporting -------------------------------------------------------------

    def note_seq(self, seq: int) -> None:
        self._last_seq = seq

    def violation(self, kind: str, text: str) -> Violation:
        transcript = self.broker.transcript
        seq = len(transcript) - 1
        transcript.note("violation", "referee", f"{kind}: {text}")
        v = Violation(kind, text, self.broker.elapsed, seq, transcript.excerpt(seq))
        self.violations.append(v)
        return v

    def incident(self, kind: str, text: str) -> None:
        """What the broker detects itself is a violation too.  A response to
        ``sched.free`` (sent without expecting one) is ``free-answered``."""
        if kind == "response-unknown-request":
            entry = self.broker.transcript.entry(self._last_seq)
            if entry.kind == "msg" and entry.topic.startswith("sched.free (response)"):
                kind = "free-answered"
                text = f"{entry.source} responded to sched.free, which has no response"
        self.violation(kind, text)

    def saw(self, occasion: str) -> bool:
        """Whether *occasion* (an :data:`~conformance.clauses.OCCASIONS`
        key) happened on this broker."""
        return occasion in self.seen

    def kinds(self) -> list[str]:
        """The kinds of the violations found so far, in order."""
        return [v.kind for v in self.violations]

    def assert_clean(self) -> None:
        """Raise :class:`RefereeError` listing every violation, if any."""
        if self.violations:
            raise RefereeError("\n\n".join(str(v) for v in self.violations))

    # -- hooks called by the job-manager model -----------------------------------

    def alloc_sent(self, job) -> None:
        self._open.add(job.id)
        self._cancels.pop(job.id, None)
        self._reported_unanswered.discard(job.id)

    def cancel_sent(self, job) -> None:
        if job.id in self._open:
            self.seen.add("cancel")
            self._cancels.setdefault(job.id, len(self.broker.transcript))

    def alloc_response(self, jobid, kind, payload, known, pending) -> bool:
        """Check one alloc response; return False if it is not valid RFC 27."""
        self.seen.add("alloc-response")
        f58 = _JobName(jobid)
        if kind not in (0, 1, 2, 3):
            self.violation(
                "unknown-response-type", f"{f58}: alloc response type {kind}"
            )
            return False
        if known is None:
            self.violation(
                "response-unknown-job", f"alloc response for {f58}, which is no job"
            )
            return False
        if kind == 1:
            self.seen.add("annotate")
            if not isinstance(payload.get("annotations"), dict):
                self.violation(
                    "annotate-without-annotations",
                    f"{f58}: ANNOTATE has no annotations",
                )
                return False
            if jobid not in self._open:
                self.violation(
                    "annotation-after-final",
                    f"{f58}: ANNOTATE after the request was finalized",
                )
                return False
            self._check_t_estimate(f58, payload)
            return True
        if jobid not in self._open:
            self.violation(
                "second-final-response",
                f"{f58}: {('SUCCESS', '', 'DENY', 'CANCEL')[kind]} for a request "
                "that was already answered (or never sent)",
            )
            return False
        if kind == 3 and jobid not in self._cancels:
            self.violation(
                "unrequested-cancel",
                f"{f58}: CANCEL response but no sched.cancel was sent",
            )
        self._open.discard(jobid)
        self._cancels.pop(jobid, None)
        if kind == 0:
            self.seen.add("success")
            self._check_t_estimate(f58, payload)
            return self._check_success(known, payload, pending is not None)
        return True

    def _check_t_estimate(self, f58: _JobName, payload: dict) -> None:
        annotations = payload.get("annotations")
        # (annotations that are not an object: flux-core ignores them)
        sched = annotations.get("sched") if isinstance(annotations, dict) else None
        if not isinstance(sched, dict) or "t_estimate" not in sched:
            return
        self.seen.add("t-estimate")
        problem = t_estimate_problem(
            sched["t_estimate"], self.broker.now, self.broker.clock.epoch
        )
        if problem is not None:
            self.violation(
                "t-estimate-not-absolute", f"{f58}: sched.t_estimate {problem}"
            )

    def _check_success(self, job, payload, pending: bool) -> bool:
        R = payload.get("R")
        if not isinstance(R, dict):
            self.violation("success-without-R", f"{job.f58}: SUCCESS carries no R")
            return False
        ok = True
        key = f"{JobID(job.id).kvs}.R"
        if key not in self.broker.kvs:
            self.violation(
                "success-without-kvs-R",
                f"{job.f58}: SUCCESS before R was committed to the KVS ({key})",
            )
            ok = False
        try:
            children = _rank_children(R, self.broker.machine)
        except _Nonexistent as exc:
            # Found on the parsed ranges: such an R may name billions of ids.
            self.violation("R-nonexistent-resources", f"{job.f58}: R uses {exc}")
            return False
        except (ValueError, TypeError) as exc:
            self.violation(
                "R-does-not-match-request", f"{job.f58}: R unreadable: {exc}"
            )
            return False
        self._checked[job.id] = children
        resources = self.broker.resources
        missing = set(children) - resources.existing
        if missing:
            self.violation(
                "R-nonexistent-resources",
                f"{job.f58}: R uses ranks {IDset(sorted(missing))} that do not exist",
            )
            ok = False
        else:
            ok &= self._check_cores_exist(job, children)
        ok &= self._check_down(job, children)
        ok &= self._check_overlap(job, children)
        ok &= self._check_request(job, children)
        ok &= self._check_times(job, R)
        return ok

    def _check_times(self, job, R: dict) -> bool:
        if job.duration_unreadable:
            # No time limit to compare with: granting the malformed jobspec
            # at all is robust.hostile-jobspecs' finding, not this one.
            return True
        problem = R_times_problem(
            R.get("execution"),
            now=self.broker.now,
            duration=job.duration,
            instance_expirations=self._instance_expirations(),
        )
        if problem is None:
            return True
        self.violation("R-times-wrong", f"{job.f58}: {problem}")
        return False

    def _instance_expirations(self) -> list[float]:
        # An update reaches the scheduler a reactor iteration later: an R
        # stamped with the value it had before is not its fault.
        now = self.broker.resources.expiration
        if now != self._instance_expiration[-1]:
            self._instance_expiration.append(now)
        return self._instance_expiration

    def _check_cores_exist(self, job, children) -> bool:
        machine = self.broker.machine
        for rank, (cores, gpus) in sorted(children.items()):
            group = machine.group_of(rank)
            if (
                max(cores, default=-1) >= group.cores
                or max(gpus, default=-1) >= group.gpus
            ):
                self.violation(
                    "R-nonexistent-resources",
                    f"{job.f58}: R uses cores {sorted(cores)} / gpus {sorted(gpus)} "
                    f"on rank {rank}, which has {group.cores} cores, {group.gpus} gpus",
                )
                return False
        return True

    def _check_down(self, job, children) -> bool:
        link = self.broker.scheduler
        iteration = link.reactor.iterations if link is not None else 0
        # A rank counts as down for the scheduler once it has had a full
        # reactor iteration to take the "down" update in.
        down = [
            r
            for r in children
            if r in self._down_since and iteration > self._down_since[r] + 1
        ]
        if down:
            self.violation(
                "R-down-resources",
                f"{job.f58}: R uses ranks {IDset(sorted(down))} the scheduler was "
                "told are down",
            )
            return False
        return True

    def _check_overlap(self, job, children) -> bool:
        clashes = []
        for rank, (cores, gpus) in children.items():
            for other, (ocores, ogpus) in self._held.get(rank, {}).items():
                if other != job.id and (cores & ocores or gpus & ogpus):
                    clashes.append((rank, other))
        if clashes:
            rank, other = clashes[0]
            self.violation(
                "R-overlap",
                f"{job.f58}: R overlaps {JobID(other).f58} on rank {rank}"
                + (f" and {len(clashes) - 1} more" if len(clashes) > 1 else ""),
            )
            return False
        return True

    def _check_request(self, job, children) -> bool:
        try:
            request = self._requests.get(job.id)
            if request is None:
                request = ResourceRequest.from_jobspec(job.jobspec)
                self._requests[job.id] = request
        except Exception as exc:  # noqa: BLE001 - any parse failure is a mismatch
            self.violation(
                "R-does-not-match-request",
                f"{job.f58}: SUCCESS for a jobspec that cannot be parsed ({exc})",
            )
            return False
        problems = request_problems(request, children, self.broker.machine)
        if problems:
            text = f"{job.f58}: " + "; ".join(problems)
            self.violation("R-does-not-match-request", text)
        ok = not problems
        if request.constraint:
            self.seen.add("constrained-success")
            ok &= self._check_constraint(job, request.constraint, children)
        return ok

    def _check_constraint(self, job, constraint, children) -> bool:
        if self._instance is None:
            self._instance = Rv1Set(self.broker.resources.R)
        try:
            if isinstance(constraint, str):
                constraint = json.loads(constraint)
            allowed = set(self._instance.copy_constraint(constraint).ranks())
        except (ValueError, TypeError, AttributeError) as exc:
            self.violation(
                "R-violates-constraint",
                f"{job.f58}: SUCCESS for a constraint that cannot be evaluated ({exc})",
            )
            return False
        outside = set(children) - allowed
        if outside:
            self.violation(
                "R-violates-constraint",
                f"{job.f58}: ranks {IDset(sorted(outside))} do not satisfy the "
                f"constraint {json.dumps(constraint, sort_keys=True)}",
            )
            return False
        return True

    def job_started(self, job) -> None:
        self.seen.add("start")
        self._requests.pop(job.id, None)
        sched = (job.annotations or {}).get("sched")
        stale = [k for k in PENDING_KEYS if isinstance(sched, dict) and k in sched]
        if stale:
            self.violation(
                "stale-annotation",
                f"{job.f58}: started with "
                + ", ".join(f"sched.{k}" for k in stale)
                + " still set (left over from while it was pending)",
            )
        children = self._checked.pop(job.id, None)
        if children is None:
            try:
                children = _rank_children(job.R, self.broker.machine)
            except (ValueError, TypeError):
                # Judged at SUCCESS already; an unreadable R holds nothing.
                children = {}
        for rank, held in children.items():
            self._held.setdefault(rank, {})[job.id] = held

    def free_sent(self, jobid: int, R: dict, final: bool) -> None:
        self.seen.add("free")
        self._checked.pop(jobid, None)
        try:
            ranks = ranks_of(R, self.broker.machine.size)
        except (ValueError, TypeError):
            ranks = list(self._held)  # the job held nothing readable there
        for rank in ranks:
            owners = self._held.get(rank)
            if owners is not None:
                owners.pop(jobid, None)
                if not owners:
                    del self._held[rank]

    def ranks_down(self, ranks) -> None:
        link = self.broker.scheduler
        iteration = link.reactor.iterations if link is not None else 0
        for rank in ranks:
            self._down_since.setdefault(rank, iteration)

    def ranks_up(self, ranks) -> None:
        for rank in ranks:
            self._down_since.pop(rank, None)

    def scheduler_restarted(self) -> None:
        """A new scheduler instance starts from a clean protocol state."""
        self._open.clear()
        self._cancels.clear()
        self._reported_unanswered.clear()
        self._down_since = {r: -2 for r in self._down_since}

    def quiescent(self) -> None:
        """Nothing is ready: a cancel still unanswered now never will be,
        unless the scheduler has a timer armed."""
        if not self._cancels:
            return
        link = self.broker.scheduler
        if link is not None and link.state == "reactor":
            if link.reactor.busy() or link.reactor.next_timer_time() is not None:
                return
        for jobid in sorted(self._cancels):
            if jobid in self._reported_unanswered or jobid not in self._open:
                continue
            self._reported_unanswered.add(jobid)
            self.violation(
                "unanswered-cancel",
                f"{JobID(jobid).f58}: sched.cancel was never answered and the "
                "scheduler is idle",
            )


__all__ = [
    "T_ESTIMATE_TOLERANCE",
    "Referee",
    "RefereeError",
    "Violation",
    "request_problems",
    "t_estimate_problem",
]
