"""Probes of the protocol suite: the alloc protocol around running jobs.

They cover cancels of unknown and running jobs, frees, feasibility checks,
expiration updates, constraints, request shapes and infeasible requests
(see :mod:`conformance.probes.protocol` for loading and the handshake).
Every probe
runs its jobs to the end and checks that they all came out as they must;
the referee judges each SUCCESS on the way (R inside the pool, disjoint,
matching the request exactly, satisfying its constraints).

Feasibility is optional in RFC 27: a scheduler that registers no
``feasibility`` service gets *not applicable* for the ``feasibility.check``
half of ``feasibility.agrees`` and of ``alloc.constraints-honoured``
(there is nothing to ask); its alloc half is judged all the same.
"""

from __future__ import annotations

import errno

from flux.job import JobID

from conformance.findings import not_applicable
from conformance.probes import ProbeContext, probe
from conformance.probes.protocol import (
    ANSWER_TIMEOUT,
    alive,
    describe,
    exit_text,
    jobspec,
    load_or_fail,
    responses_from,
    submit,
)

#: Two virtual times this close are the same instant.
TOLERANCE = 1.0


def _machine(*groups, uniform=None):
    from mock_broker.machine import Machine, NodeGroup

    if uniform is not None:
        return Machine.uniform(*uniform)
    return Machine(tuple(NodeGroup(*g) for g in groups))


def _check(broker, link, spec: dict):
    """Ask ``feasibility.check``: ``(answered, error text or None)``."""
    if not alive(link):
        return False, None
    try:
        broker.rpc(
            "feasibility.check",
            {"jobspec": spec},
            module=link.name,
            timeout=ANSWER_TIMEOUT,
        )
    except TimeoutError:
        return False, None
    except OSError as exc:
        return True, exc.strerror or ""
    return True, None


def _has_feasibility(broker, link) -> bool:
    return broker.services.get("feasibility") is link


def _denial(job) -> str | None:
    """The note of the job's alloc denial, or None if it was not denied."""
    if job.result != "denied":
        return None
    notes = [note for kind, _, note in job.exceptions if kind == "alloc"]
    return notes[0] if notes else ""


# -- cancel ------------------------------------------------------------------------


@probe("protocol:cancel-unknown", ["cancel.unknown-ignored"], budget=15.0)
def cancel_unknown(ctx: ProbeContext):
    """sched.cancel for an unknown id, an ended job and a running job: no
    answer, the running job keeps its resources, and scheduling goes on."""
    clause = "cancel.unknown-ignored"
    broker = ctx.new_broker(_machine(uniform=(2, 4)))
    link, out = load_or_fail(ctx, broker, [clause])
    if link is None:
        return out
    whole = dict(slots=1, cores=4, nodes=1)
    done = submit(broker, runtime=1.0, **whole)
    broker.run_for(5.0)
    running = submit(broker, runtime=100.0, **whole)
    broker.run_for(1.0)
    waiting = submit(broker, runtime=10.0, nodes=2, slots=2, cores=4)
    broker.run_for(1.0)
    if broker.jobs.job(running).state != "RUN":
        text = f"a one-node job on an idle machine did not start: {describe(broker, running)}"
        return [ctx.fail(clause, text, broker)]
    unknown = max(broker.jobs.jobs) + 4242
    for label, target in (
        ("an unknown job id", unknown),
        ("a job that has ended", done),
        ("a running job", running),
    ):
        mark = len(broker.transcript)
        broker.send_request(link, "sched.cancel", {"id": target})
        broker.run_until_quiet()
        answers = [
            e
            for e, p in responses_from(broker, link.name, "sched.alloc", mark)
            if isinstance(p, dict) and p.get("id") == target
        ] + [e for e, _ in responses_from(broker, link.name, "sched.cancel", mark)]
        if answers:
            text = f"sched.cancel for {label} ({JobID(target).f58}) was answered"
            out.append(ctx.fail(clause, text, broker, answers[0].seq))
        if not alive(link):
            text = f"after sched.cancel for {label}, {exit_text(link)}"
            return out + [ctx.fail(clause, text, broker)]
    later = submit(broker, runtime=10.0, **whole)
    broker.run_for(400.0)
    jobs = broker.jobs
    for jobid in (running, waiting, later):
        if jobs.job(jobid).result != "completed":
            text = f"scheduling stopped after the cancels: {describe(broker, jobid)}"
            return out + [ctx.fail(clause, text, broker)]
    first, second = jobs.job(running), jobs.job(waiting)
    if second.t_run < first.t_end - TOLERANCE:
        text = (
            f"the running job {first.f58} lost its resources to the cancel: "
            f"{second.f58} started on them before it ended"
        )
        out.append(ctx.fail(clause, text, broker))
    return out


# -- free --------------------------------------------------------------------------


@probe("protocol:free", ["free.no-response"], budget=15.0)
def free(ctx: ProbeContext):
    """Whole frees, then housekeeping's partial ones (``release-after``);
    none may be answered (the referee reports ``free-answered``)."""
    clause = "free.no-response"
    out = []
    for release_after in (None, 5.0):
        broker = ctx.new_broker(_machine(uniform=(4, 4)), release_after=release_after)
        link, failed = load_or_fail(ctx, broker, [clause])
        if link is None:
            return failed
        submit(broker, runtime=10.0, nodes=4, slots=4, cores=4)
        submit(broker, runtime=10.0, nodes=1, slots=1, cores=4)
        submit(broker, runtime=10.0, nodes=3, slots=3, cores=4)
        broker.run_for(200.0)
        if "free-answered" in broker.observer.kinds():
            continue
        answers = responses_from(broker, link.name, "sched.free")
        if answers:
            text = "a sched.free was answered"
            out.append(ctx.fail(clause, text, broker, answers[0][0].seq))
    return out


# -- feasibility -------------------------------------------------------------------

#: (what, shape, could it ever run on 2 nodes of 4 cores)
FEASIBILITY_CASES = (
    ("two whole nodes", dict(nodes=2, slots=2, cores=4), True),
    ("two 2-core slots on one node", dict(nodes=1, slots=2, cores=2), True),
    ("eight 1-core slots", dict(slots=8, cores=1), True),
    ("three nodes", dict(nodes=3, slots=3, cores=1), False),
    ("an 8-core slot", dict(nodes=1, slots=1, cores=8), False),
    ("three 3-core slots (a slot never spans nodes)", dict(slots=3, cores=3), False),
    ("a GPU", dict(nodes=1, slots=1, cores=1, gpus=1), False),
)


@probe("protocol:feasibility", ["feasibility.agrees"], budget=15.0)
def feasibility(ctx: ProbeContext):
    """feasibility.check on a full machine, then the same jobs submitted:
    what the check accepts must run, what it rejects (with a message) must
    be denied, and each answer must be right for the machine."""
    clause = "feasibility.agrees"
    broker = ctx.new_broker(_machine(uniform=(2, 4)))
    link, out = load_or_fail(ctx, broker, [clause])
    if link is None:
        return out
    if not _has_feasibility(broker, link):
        return [
            not_applicable(
                clause,
                ctx.probe,
                "no feasibility service is registered (feasibility is optional)",
            )
        ]
    submit(broker, runtime=20.0, nodes=2, slots=2, cores=4)
    broker.run_for(1.0)
    verdicts = {}
    for label, shape, feasible in FEASIBILITY_CASES:
        mark = len(broker.transcript)
        answered, error = _check(broker, link, jobspec(**shape))
        if not answered:
            text = f"feasibility.check for {label} was not answered"
            return out + [ctx.fail(clause, text, broker, mark)]
        verdicts[label] = error
        if feasible and error is not None:
            text = f"feasibility.check rejects {label}, which can run: {error!r}"
            out.append(ctx.fail(clause, text, broker))
        elif not feasible and error is None:
            text = f"feasibility.check accepts {label}, which can never run here"
            out.append(ctx.fail(clause, text, broker))
        elif error is not None and not error.strip():
            text = f"feasibility.check rejects {label} without a message"
            out.append(ctx.fail(clause, text, broker))
    ids = {
        label: submit(broker, runtime=5.0, **shape)
        for label, shape, _ in FEASIBILITY_CASES
    }
    broker.run_for(300.0)
    for label, jobid in ids.items():
        job = broker.jobs.job(jobid)
        accepted = verdicts[label] is None
        if accepted and job.result != "completed":
            text = (
                f"feasibility.check accepted {label}, but alloc did not run it: "
                f"{describe(broker, jobid)}"
            )
            out.append(ctx.fail(clause, text, broker))
        elif not accepted and _denial(job) is None:
            text = (
                f"feasibility.check rejected {label}, but alloc did not deny it: "
                f"{describe(broker, jobid)}"
            )
            out.append(ctx.fail(clause, text, broker))
    return out


# -- expiration --------------------------------------------------------------------


@probe("protocol:expiration", ["expiration.update"], budget=15.0)
def expiration(ctx: ProbeContext):
    """A running job's time limit is cut from 300 s to 200 s at t=50.  The
    scheduler must answer (success, ENOSYS or a refusing error); once it
    accepts, its estimate for the next job must not stay at the old end
    after the next scheduling pass (a third job's arrival), and the next
    job starts when the resources come back."""
    clause = "expiration.update"
    broker = ctx.new_broker(_machine(uniform=(1, 4)))
    link, out = load_or_fail(ctx, broker, [clause])
    if link is None:
        return out
    whole = dict(nodes=1, slots=1, cores=4)
    first = submit(broker, runtime=500.0, duration=300.0, **whole)
    broker.run_for(1.0)
    second = submit(broker, runtime=10.0, duration=10.0, **whole)
    broker.run_for(49.0)
    job = broker.jobs.job(first)
    if job.state != "RUN":
        text = f"a job on an idle machine did not start: {describe(broker, first)}"
        return [ctx.fail(clause, text, broker)]
    if not alive(link):
        return [ctx.fail(clause, f"before the update, {exit_text(link)}", broker)]
    new_end = job.t_run + 200.0
    mark = len(broker.transcript)
    broker.jobs.update_expiration(first, new_end)
    broker.run_until_condition(
        lambda: bool(responses_from(broker, link.name, "sched.expiration", mark)),
        timeout=ANSWER_TIMEOUT,
    )
    answers = responses_from(broker, link.name, "sched.expiration", mark)
    if not answers:
        text = f"sched.expiration was not answered in {ANSWER_TIMEOUT:g} s"
        return [ctx.fail(clause, text, broker, mark)]
    answer = answers[0][0]
    accepted = answer.errnum in (0, errno.ENOSYS)
    if accepted:
        # Estimates may lag until the next scheduling pass (upstream runs
        # its forecast after a pass, and an expiration update triggers
        # none), so give the scheduler an event first: a third job.
        submit(broker, runtime=1.0, duration=1.0, nodes=1, slots=1, cores=1)
        broker.run_until_quiet()
        sched = (broker.jobs.job(second).annotations or {}).get("sched") or {}
        estimate = sched.get("t_estimate")
        if isinstance(estimate, (int, float)) and estimate > new_end + TOLERANCE:
            text = (
                f"the scheduler accepted the new end of {job.f58} "
                f"(t={new_end - broker.clock.epoch:g}) but still estimates the "
                f"next job at t={estimate - broker.clock.epoch:g}"
            )
            out.append(ctx.fail(clause, text, broker, answer.seq))
    broker.run_for(600.0)
    nxt = broker.jobs.job(second)
    if not alive(link):
        return out + [ctx.fail(clause, f"after the update, {exit_text(link)}", broker)]
    if nxt.t_run is None or abs(nxt.t_run - job.t_end) > TOLERANCE:
        text = (
            f"{nxt.f58} should start when {job.f58} ends "
            f"(t={job.t_end - broker.clock.epoch:g}): {describe(broker, second)}"
        )
        out.append(ctx.fail(clause, text, broker))
    return out


# -- constraints -------------------------------------------------------------------

#: (what, shape, constraint, ranks that satisfy it) on ranks 0-1 "slow" and
#: 2-3 "fast", hosts node0-node3.  An empty set: no rank satisfies it.
CONSTRAINT_CASES = (
    ("rank 3", dict(nodes=1, slots=1, cores=1), {"ranks": ["3"]}, {3}),
    ("fast nodes", dict(nodes=2, slots=2, cores=2), {"properties": ["fast"]}, {2, 3}),
    ("not fast", dict(nodes=1, slots=1, cores=4), {"properties": ["^fast"]}, {0, 1}),
    (
        "hosts node1 and node3",
        dict(nodes=2, slots=2, cores=1),
        {"hostlist": ["node[1,3]"]},
        {1, 3},
    ),
    (
        "fast but not rank 2",
        dict(nodes=1, slots=1, cores=2),
        {"and": [{"properties": ["fast"]}, {"not": [{"ranks": ["2"]}]}]},
        {3},
    ),
    (
        "rank 0 or host node2",
        dict(slots=2, cores=4),
        {"or": [{"ranks": ["0"]}, {"hostlist": ["node2"]}]},
        {0, 2},
    ),
    (
        "a property nobody has",
        dict(nodes=1, slots=1, cores=1),
        {"properties": ["gpu"]},
        set(),
    ),
    (
        "three fast nodes",
        dict(nodes=3, slots=3, cores=1),
        {"properties": ["fast"]},
        set(),
    ),
)


@probe("protocol:constraints", ["alloc.constraints-honoured"], budget=15.0)
def constraints(ctx: ProbeContext):
    """Jobs constrained by rank, property, host and boolean combinations:
    each satisfiable one runs (the referee checks its R against the
    constraint), each unsatisfiable one is denied, and feasibility.check
    (if registered) tells them apart the same way."""
    clause = "alloc.constraints-honoured"
    machine = _machine((2, 4, 0, ("slow",)), (2, 4, 0, ("fast",)))
    broker = ctx.new_broker(machine)
    link, out = load_or_fail(ctx, broker, [clause])
    if link is None:
        return out
    specs = {}
    for label, shape, constraint, _ in CONSTRAINT_CASES:
        spec = jobspec(**shape)
        spec["attributes"]["system"]["constraints"] = constraint
        specs[label] = spec
    if _has_feasibility(broker, link):
        for label, _, _, allowed in CONSTRAINT_CASES:
            answered, error = _check(broker, link, specs[label])
            if not answered:
                text = f"feasibility.check for {label} was not answered"
                out.append(ctx.fail(clause, text, broker))
            elif allowed and error is not None:
                text = f"feasibility.check rejects a job on {label}: {error!r}"
                out.append(ctx.fail(clause, text, broker))
            elif not allowed and error is None:
                text = f"feasibility.check accepts a job on {label}, which no node is"
                out.append(ctx.fail(clause, text, broker))
    ids = {
        label: broker.jobs.submit(specs[label], runtime=5.0)
        for label, *_ in CONSTRAINT_CASES
    }
    broker.run_for(300.0)
    for label, _, _, allowed in CONSTRAINT_CASES:
        job = broker.jobs.job(ids[label])
        if allowed and job.result != "completed":
            text = f"a job on {label} could run but did not: {describe(broker, job.id)}"
            out.append(ctx.fail(clause, text, broker))
        elif not allowed and job.result != "denied":
            text = (
                f"a job on {label} can never run, yet it was not denied: "
                f"{describe(broker, job.id)}"
            )
            out.append(ctx.fail("alloc.infeasible-denied", text, broker))
    return out


# -- request shapes ----------------------------------------------------------------

#: (what, jobspec) on 4 nodes of 8 cores and 2 GPUs; every one can run.
SHAPE_CASES = (
    ("one 1-core slot", jobspec(slots=1, cores=1)),
    ("four 2-core slots on one node", jobspec(nodes=1, slots=4, cores=2)),
    ("two nodes of two 3-core slots", jobspec(nodes=2, slots=4, cores=3)),
    ("five 3-core slots, none split", jobspec(slots=5, cores=3)),
    ("two slots of 1 core and 1 GPU", jobspec(slots=2, cores=1, gpus=1)),
    (
        "one node of two slots of 2 cores, 1 GPU",
        jobspec(nodes=1, slots=2, cores=2, gpus=1),
    ),
    ("two exclusive nodes", jobspec(nodes=2, slots=2, cores=1, exclusive=True)),
    ("1-2 nodes of 4 cores", jobspec(nodes={"min": 1, "max": 2}, cores=4)),
    (
        "two exclusive slots (whole nodes)",
        {
            "version": 1,
            "resources": [
                {
                    "type": "slot",
                    "count": 2,
                    "label": "task",
                    "exclusive": True,
                    "with": [{"type": "core", "count": 1}],
                }
            ],
            "tasks": [{"command": ["app"], "slot": "task", "count": {"per_slot": 1}}],
            "attributes": {"system": {"duration": 0.0}},
        },
    ),
)


@probe("protocol:request-shapes", ["alloc.R-matches-request"], budget=15.0)
def request_shapes(ctx: ProbeContext):
    """Multi-slot, multi-node, slot-only, GPU, exclusive and range requests
    on a machine with GPUs: each must run, and the referee holds each R to
    its request exactly (``R-does-not-match-request``)."""
    clause = "alloc.R-matches-request"
    broker = ctx.new_broker(_machine(uniform=(4, 8, 2)))
    link, out = load_or_fail(ctx, broker, [clause])
    if link is None:
        return out
    ids = {label: broker.jobs.submit(spec, runtime=5.0) for label, spec in SHAPE_CASES}
    broker.run_for(300.0)
    for label, jobid in ids.items():
        if broker.jobs.job(jobid).result != "completed":
            text = f"a job asking for {label} never ran: {describe(broker, jobid)}"
            out.append(ctx.fail(clause, text, broker))
    return out


# -- infeasible requests -----------------------------------------------------------

#: (what, shape, feasible) on 2 nodes of 4 cores, in submission order.
INFEASIBLE_CASES = (
    ("both nodes", dict(nodes=2, slots=2, cores=4), True),
    ("three nodes", dict(nodes=3, slots=3, cores=1), False),
    ("a 5-core slot", dict(nodes=1, slots=1, cores=5), False),
    ("one node", dict(nodes=1, slots=1, cores=4), True),
    ("three 3-core slots", dict(slots=3, cores=3), False),
    ("a GPU", dict(slots=1, cores=1, gpus=1), False),
    ("three exclusive nodes", dict(nodes=3, slots=3, cores=1, exclusive=True), False),
    ("two 2-core slots", dict(slots=2, cores=2), True),
)


@probe("protocol:infeasible", ["alloc.infeasible-denied"], budget=15.0)
def infeasible(ctx: ProbeContext):
    """Requests that can never run, queued among feasible ones while the
    machine is busy: each must be denied with a note, and the feasible jobs
    must all run."""
    clause = "alloc.infeasible-denied"
    broker = ctx.new_broker(_machine(uniform=(2, 4)))
    link, out = load_or_fail(ctx, broker, [clause])
    if link is None:
        return out
    ids = {
        label: submit(broker, runtime=10.0, **shape)
        for label, shape, _ in INFEASIBLE_CASES
    }
    broker.run_for(300.0)
    for label, _, feasible in INFEASIBLE_CASES:
        job = broker.jobs.job(ids[label])
        note = _denial(job)
        if feasible and job.result != "completed":
            text = f"a feasible job ({label}) did not run: {describe(broker, job.id)}"
            out.append(ctx.fail(clause, text, broker))
        elif not feasible and note is None:
            text = (
                f"a job asking for {label} was not denied: {describe(broker, job.id)}"
            )
            out.append(ctx.fail(clause, text, broker))
        elif not feasible and not note.strip():
            text = f"a job asking for {label} was denied without a note"
            out.append(ctx.fail(clause, text, broker))
    return out
