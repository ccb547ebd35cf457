"""Probes of the policy suite: the scheduler against the textbook policies.

Each probe (``policy:<policy>:<workload>``) replays one workload with the
scheduler under test on a fresh broker, then judges the run *per instant*
from the recorded facts: at every virtual instant where the scheduler
started jobs or could have (each submit, each end) it rebuilds the state
the policy saw -- the running jobs, each expected to end at start + time
limit, and the queue, the jobs with an outstanding alloc request, in queue
order -- and compares the jobs the scheduler started then with those the
independent textbook model (:mod:`conformance.policy.textbook`) starts.
Each instant is judged from the observed state, so a divergence does not
cascade; the first divergence of each clause is its evidence.

The workloads (:mod:`conformance.policy.workloads`) fix the answer: every
submit and end at its own instant (an instant where two happened anyway
is not judged, and counted in the statistics as ``ambiguous``).

Divergences map to clauses: FIFO, any: ``policy.fifo-order``.  EASY: a
start the model does not make that moves the head's earliest start past
its shadow time: ``policy.easy-head-reservation``; any other:
``policy.easy-backfill``.  Conservative, any: ``policy.conservative-backfill``;
and a job starting later than the first ``sched.t_estimate`` announced for
it (ANNOTATE and SUCCESS payloads): ``policy.conservative-t-estimate``.
Every policy: a job still waiting when the ``sched.t_estimate`` it carries
passes (no job overruns its limit, so the scheduler had what it needed to
update or clear it): ``policy.t-estimate-current``.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass, field

from conformance.findings import Finding, not_applicable
from conformance.policy import textbook
from conformance.policy.textbook import Queued, Running, WorkloadJob
from conformance.policy.workloads import ONLY_FOR, URGENT, WORKLOADS, Workload
from conformance.probes import Probe, ProbeContext, add_probe
from mock_broker.flux_substitute.message import decode_payload
from mock_broker.jobmanager.jobs import URGENCY_DEFAULT

#: Times closer than this (virtual seconds) are one instant.
INSTANT = 1e-4
#: How much later than its first t_estimate a job may start (seconds).
T_ESTIMATE_TOLERANCE = 1e-3
#: At most this many jobs are listed in a queue or running set.
SHOWN = 12
#: How the job-manager's transcript note of a scheduler going away starts.
STOPPED = "scheduler interface stopped"

CURRENT = "policy.t-estimate-current"
CLAUSES = {
    # Declared any: no textbook to compare with, but estimates still must
    # not go stale.
    "any": (CURRENT,),
    "fifo": ("policy.fifo-order", CURRENT),
    "easy": ("policy.easy-backfill", "policy.easy-head-reservation", CURRENT),
    "conservative": (
        "policy.conservative-backfill",
        "policy.conservative-t-estimate",
        CURRENT,
    ),
}

# -- the run and its facts -------------------------------------------------------


@dataclass
class Record:
    """What happened to one job of the workload (times since broker start)."""

    job: WorkloadJob
    jobid: int
    submit: float
    priority: int = 0
    start: float | None = None
    end: float | None = None
    #: Outstanding alloc requests: (sent, final response or None).
    requests: list = field(default_factory=list)
    #: The first t_estimate announced: (when, t_estimate, transcript seq).
    estimate: tuple[float, float, int] | None = None
    #: Every t_estimate sent, in order: (when, t_estimate or None when
    #: cleared, transcript seq).
    estimates: list = field(default_factory=list)
    success_seq: int | None = None
    f58: str = ""


def run_workload(ctx: ProbeContext, workload: Workload):
    """Replay *workload* with the scheduler under test; return the broker
    and the job records, in workload order."""
    broker = ctx.new_broker(workload.machine())
    ctx.load(broker)
    epoch = broker.clock.epoch
    ids: dict[int, WorkloadJob] = {}
    for job in workload.jobs:
        spec = workload.jobspec(job)

        urgency = URGENT if job.key in workload.urgent else URGENCY_DEFAULT

        def submit(job=job, spec=spec, urgency=urgency):
            ids[broker.jobs.submit(spec, urgency, runtime=job.runtime)] = job

        broker.at(epoch + job.submit, submit)
    horizon = workload.jobs[-1].submit + sum(j.limit for j in workload.jobs) + 60
    jm, n = broker.jobs, len(workload.jobs)
    for when in workload.restarts:
        broker.run_until(epoch + when)
        broker.restart_scheduler()

    def finished() -> bool:
        return (
            len(ids) == n
            and not jm.queue
            and not jm.sent
            and all(jm.job(i).state == "INACTIVE" for i in ids)
        )

    broker.run_until_condition(finished, timeout=horizon)
    return broker, _records(broker, ids)


def _is_time(value) -> bool:
    """A finite number (JSON true is no time)."""
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
    )


def _records(broker, ids: dict[int, WorkloadJob]) -> list[Record]:
    epoch = broker.clock.epoch
    records = {}
    for jobid, job in ids.items():
        j = broker.jobs.job(jobid)
        start, end = (None if t is None else t - epoch for t in (j.t_run, j.t_end))
        end = None if start is None else end  # denied or canceled: never ran
        records[jobid] = Record(job, jobid, j.t_submit - epoch, j.priority, start, end)
        records[jobid].f58 = j.f58
    sent: dict[int, float] = {}
    for e in broker.transcript.entries():
        if e.kind == "event" and e.text.startswith(STOPPED):
            # The job-manager takes back every outstanding request and
            # clears its sched annotations; hello and new requests follow.
            for jobid, when in sent.items():
                records[jobid].requests.append((when, e.time))
                if records[jobid].estimates:
                    records[jobid].estimates.append((e.time, None, e.seq))
            sent.clear()
            continue
        if e.kind != "msg" or not e.topic.startswith("sched.alloc"):
            continue
        # The scheduler wrote the responses: only what the job-manager
        # reads counts (no boolean id, no NaN), and any shape is skipped.
        try:
            p = decode_payload(e.text)
        except (ValueError, TypeError):
            continue
        jobid = p.get("id") if isinstance(p, dict) else None
        if type(jobid) is not int or jobid not in records:
            continue
        rec = records[jobid]
        if e.topic == "sched.alloc":
            sent[rec.jobid] = e.time
            continue
        kind = p.get("type")
        annotations = p.get("annotations")
        sched = annotations.get("sched") if isinstance(annotations, dict) else None
        est = sched.get("t_estimate") if isinstance(sched, dict) else None
        if rec.estimate is None and _is_time(est):
            rec.estimate = (e.time, est - epoch, e.seq)
        if isinstance(sched, dict) and "t_estimate" in sched:
            value = est - epoch if _is_time(est) else None
            rec.estimates.append((e.time, value, e.seq))
        if kind in (0, 2, 3) and rec.jobid in sent:
            rec.requests.append((sent.pop(rec.jobid), e.time))
            if kind == 0:
                rec.success_seq = e.seq
            elif rec.estimates and rec.estimates[-1][1] is not None:
                # Denied, or withdrawn (queue-depth): the job-manager
                # clears the job's sched annotations.
                rec.estimates.append((e.time, None, e.seq))
    for jobid, when in sent.items():
        records[jobid].requests.append((when, None))
    return sorted(records.values(), key=lambda r: r.job.key)


# -- judging ---------------------------------------------------------------------


@dataclass(frozen=True)
class Divergence:
    """A clause broken at virtual time *time*; *seq* marks the transcript."""

    clause: str
    time: float
    text: str
    seq: int | None = None


def _instants(records: list[Record]) -> tuple[list[float], dict[float, int]]:
    """Every time something happened, grouped into instants: the instants'
    times, and each recorded time's instant index."""
    times = set()
    for r in records:
        times.update(t for t in (r.submit, r.start, r.end) if t is not None)
        for sent, final in r.requests:
            times.update(t for t in (sent, final) if t is not None)
    group: dict[float, int] = {}
    out: list[float] = []
    for t in sorted(times):
        if not out or t - out[-1] > INSTANT:
            out.append(t)
        group[t] = len(out) - 1
    return out, group


def _label(r: Record, named: bool = False) -> str:
    return f"j{r.job.key}={r.f58}" if named and r.f58 else f"j{r.job.key}"


def _short(items: list[str]) -> str:
    more = f" ... (+{len(items) - SHOWN})" if len(items) > SHOWN else ""
    return " ".join(items[:SHOWN]) + more if items else "-"


def judge_records(
    policy: str,
    total: int,
    records: list[Record],
    unit: str = "nodes",
    restarts: tuple[float, ...] = (),
):
    """Compare the run with the textbook *policy* at every instant, on a
    machine of *total* nodes (or cores: *unit* names them in the evidence)
    where the scheduler was restarted at the times *restarts*.

    Returns ``(divergences, stats)``: every divergence in time order (one
    per instant) and counts of instants judged, skipped as ambiguous (two
    events at one instant) and divergent.
    """
    times, group = _instants(records)
    g = [_groups(r, group) for r in records]
    by_key = {r.job.key: r for r in records}
    at: list[tuple[list, list]] = [([], []) for _ in times]  # events, starts
    for r, (submit, start, end, _) in zip(records, g, strict=True):
        at[submit][0].append((r, "submit"))
        if end is not None:
            at[end][0].append((r, "end"))
        if start is not None:
            at[start][1].append(r)
    out: list[Divergence] = []
    stats = {"instants": 0, "ambiguous": 0, "divergent": 0}
    held: dict = {}
    for i, now in enumerate(times):
        events, started = at[i]
        actual = {r.job.key for r in started}
        if len(events) > 1:
            # The definition does not say in which order the scheduler sees
            # them: not judged; conservative keeps its reservations.
            stats["ambiguous"] += 1
            held = {k: s for k, s in held.items() if k not in actual}
            continue
        if not events and not started:
            continue
        stats["instants"] += 1
        running = [r for r, x in zip(records, g, strict=True) if _running(x, i)]
        queue = sorted(
            (r for r, x in zip(records, g, strict=True) if _queued(x, i)),
            key=lambda r: (-r.priority, r.submit, r.jobid),
        )
        run = [Running(r.job.nodes, r.start + r.job.limit) for r in running]
        wait = [Queued(r.job.key, r.job.nodes, r.job.limit) for r in queue]
        if policy == "fifo":
            planned = {k: now for k in textbook.fifo_starts(now, total, run, wait)}
        else:
            depth = 1 if policy == "easy" else None
            planned = textbook.plan(now, total, run, wait, depth, held)
        model = {k for k, s in planned.items() if s <= now}
        held = {k: s for k, s in planned.items() if s > now and k not in actual}
        if model == actual:
            continue
        stats["divergent"] += 1
        clause, note = _clause(policy, now, total, run, planned, model, actual, by_key)
        if events:
            trigger = f"{events[0][1]} of {_label(events[0][0])}"
        elif any(abs(now - t) <= INSTANT for t in restarts):
            trigger = "restart of the scheduler"
        else:
            trigger = "no event"
        u = unit[0]
        queued = [f"{_label(r)}:{r.job.nodes}{u}/{r.job.limit:g}s" for r in queue]
        held_by = [
            f"{_label(r)}:{r.job.nodes}{u}/{r.start + r.job.limit:.3f}" for r in running
        ]
        text = (
            f"at t={now:.3f} ({trigger}) the textbook {policy} starts "
            f"{_short([_label(by_key[k], True) for k in planned if k in model])}; "
            f"the scheduler started {_short([_label(r, True) for r in started])}."
            f"{note} "
            f"Queue ({len(queue)}, {unit}/limit): {_short(queued)}; running "
            f"({len(running)}, {unit}/expected end): {_short(held_by)}; "
            f"{total} {unit}."
        )
        extra = [by_key[k].success_seq for k in actual - model]
        seq = min((s for s in extra if s is not None), default=None)
        out.append(Divergence(clause, now, text, seq))
    return out, stats


def _groups(r: Record, group: dict[float, int]):
    """A record's instants: (submit, start, end, [(sent, final), ...])."""
    return (
        group[r.submit],
        None if r.start is None else group[r.start],
        None if r.end is None else group[r.end],
        [(group[s], None if f is None else group[f]) for s, f in r.requests],
    )


def _running(g, i: int) -> bool:
    return g[1] is not None and g[1] < i and (g[2] is None or g[2] > i)


def _queued(g, i: int) -> bool:
    if g[1] is not None and g[1] < i:
        return False
    return any(s <= i and (f is None or f >= i) for s, f in g[3])


def _clause(policy, now, total, run, planned, model, actual, by_key):
    """The clause a divergence at *now* breaks, and a note on why."""
    if policy == "fifo":
        return "policy.fifo-order", ""
    if policy == "conservative":
        return "policy.conservative-backfill", ""
    head = next(((k, s) for k, s in planned.items() if s > now), None)
    if head is None:
        return "policy.easy-backfill", ""
    key, shadow = head
    note = f" j{key} holds the reservation at shadow time {shadow:.3f}"
    if key in actual or not actual - model:
        return "policy.easy-backfill", note + "."
    job = by_key[key].job
    with_starts = run + [
        Running(by_key[k].job.nodes, now + by_key[k].job.limit) for k in actual
    ]
    later = textbook.earliest_start(now, total, with_starts, job.nodes, job.limit)
    if later is not None and later <= shadow + INSTANT:
        return "policy.easy-backfill", note + "."
    moved = "never" if later is None else f"{later:.3f}"
    return (
        "policy.easy-head-reservation",
        f"{note}; the jobs the scheduler started move its earliest start to {moved}.",
    )


def t_estimate_divergences(
    records: list[Record], last: float, unit: str = "nodes"
) -> list[Divergence]:
    """Jobs that started (or, by *last*, had not started) later than the
    first t_estimate announced for them, in time order (a job's size in
    *unit*)."""
    out = []
    for r in records:
        if r.estimate is None:
            continue
        when, est, seq = r.estimate
        began = r.start if r.start is not None else last
        if began <= est + T_ESTIMATE_TOLERANCE:
            continue
        what = "started" if r.start is not None else "had not started by"
        out.append(
            Divergence(
                "policy.conservative-t-estimate",
                began,
                f"{_label(r)} ({r.job.nodes} {unit}, limit {r.job.limit:g}s) was "
                f"announced t_estimate {est:.3f} at t={when:.3f} and {what} "
                f"t={began:.3f}, {began - est:.3f}s later (no job overran "
                "its limit).",
                r.success_seq if r.start is not None else seq,
            )
        )
    return sorted(out, key=lambda d: d.time)


def stale_estimates(records: list[Record], last: float, unit: str = "nodes"):
    """Jobs left waiting past the t_estimate they carry: each announced
    time must be replaced or cleared before it passes if the job has not
    started by then (no job overruns its limit, so nothing the scheduler
    could not foresee holds a job back).  A job waits until it starts, is
    answered otherwise, or *last*."""
    out = []
    for r in records:
        if not r.estimates:
            continue
        finals = [f for _, f in r.requests if f is not None]
        if r.start is not None:
            left = r.start
        elif len(finals) < len(r.requests):  # a request still open at the end
            left = last
        else:
            left = max(finals, default=last)
        following = r.estimates[1:] + [None]
        for (when, est, seq), after in zip(r.estimates, following, strict=True):
            until = left if after is None else min(left, after[0])
            if est is None or until <= est + T_ESTIMATE_TOLERANCE:
                continue
            if after is None and r.start is not None:
                fate = f"started at t={r.start:.3f}"
            elif after is None:
                fate = f"was still waiting at t={until:.3f}"
            else:
                fate = f"got a new one only at t={until:.3f}"
            out.append(
                Divergence(
                    CURRENT,
                    est,
                    f"{_label(r)} ({r.job.nodes} {unit}, limit {r.job.limit:g}s) "
                    f"was announced t_estimate {est:.3f} at t={when:.3f}, "
                    f"had not started when that time came, and {fate}: "
                    "its sched.t_estimate lay in the past meanwhile (no job "
                    "overran its limit).",
                    seq,
                )
            )
            break
    return sorted(out, key=lambda d: d.time)


# -- the probes --------------------------------------------------------------------


def _probe(policy: str, workload_name: str) -> Probe:
    def run(ctx: ProbeContext) -> list[Finding]:
        workload = WORKLOADS[workload_name](ctx.seed)
        broker, records = run_workload(ctx, workload)
        if policy == "any":
            divergences, stats = [], {}
        else:
            divergences, stats = judge_records(
                policy, workload.units, records, workload.unit, workload.restarts
            )
        if policy == "conservative":
            divergences += t_estimate_divergences(
                records, broker.elapsed, workload.unit
            )
        divergences += stale_estimates(records, broker.elapsed, workload.unit)
        ctx.stats.update(stats, jobs=len(records), workload=workload.name)
        findings = []
        for clause in CLAUSES[policy]:
            mine = [d for d in divergences if d.clause == clause]
            if not mine:
                continue
            first = mine[0]
            seq = first.seq if first.seq is not None else _seq_at(broker, first.time)
            text = (
                f"{first.text} First of {len(mine)} on the {workload.name} "
                f"workload (seed {ctx.seed})."
            )
            finding = ctx.fail(clause, text, broker, seq)
            finding.evidence.time = first.time
            findings.append(finding)
        if not any(r.estimates for r in records):
            # A scheduler that never announces an estimate has none to let
            # go stale: no verdict here.
            findings.append(
                not_applicable(
                    CURRENT,
                    ctx.probe,
                    "not exercised: no probe saw a sched.t_estimate annotation",
                )
            )
        return findings

    name = f"policy:{policy}:{workload_name}"
    return Probe(name, CLAUSES[policy], run, 60.0, (policy,), cost=5)


def _seq_at(broker, when: float) -> int:
    """The last transcript entry at or before virtual time *when*."""
    times = [e.time for e in broker.transcript.entries()]
    return max(0, bisect_right(times, when + INSTANT) - 1)


for _policy in CLAUSES:
    for _name in WORKLOADS:
        if _policy in ONLY_FOR.get(_name, CLAUSES):
            add_probe(_probe(_policy, _name))
