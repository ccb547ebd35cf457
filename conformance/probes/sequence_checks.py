"""The checks and evidence of ``robust.random-sequences``.

:func:`idle_check` and then :func:`end_checks` are what every example
ends with: first the running jobs end with the drains left as they are,
and an idle machine must not keep the first queued job waiting if it
fits; then everything undrained, up and released, the broker run to
quiescence, then nothing left in SCHED, nothing held (by the job-manager
model or the scheduler's own pool), and the scheduler still answering.
The rest turns hypothesis's report of a failure into evidence: the printed
steps, the transcript entry to point at, one line of description; and
bounds the time hypothesis spends shrinking.
"""

from __future__ import annotations

import contextlib

from mock_broker.jobmanager.jobs import job_order

#: Virtual seconds allowed per unfinished job when running to quiescence.
END_SLACK_PER_JOB = 700.0
#: The state machine's invariant methods (left out of the printed steps).
INVARIANTS = ("referee_clean", "module_running", "no_idle_wait", "no_job_lost")


class SequenceFailure(AssertionError):
    """An invariant broke; the message says which and how.  *jobid* names
    the job the failure is about, if one (the evidence points at it)."""

    def __init__(self, text: str, jobid: int | None = None):
        super().__init__(text)
        self.jobid = jobid


def _idle(table, jobs) -> bool:
    return not table.housekeeping.allocations and not any(
        j.state in ("RUN", "CLEANUP") for j in jobs
    )


def idle_problem(broker, submitted: list[int], min_nodes: dict[int, int]):
    """If nothing runs while the first queued job (the job-manager's
    order, held jobs aside) fits on the usable nodes (*min_nodes*: job id
    -> the fewest whole nodes its request can run on), a
    :class:`SequenceFailure` saying so; else None.  Whatever the policy,
    nothing is left for that job to wait for: the scheduler lost an event
    (a free that came during its pass, say)."""
    table = broker.jobs
    jobs = [table.job(j) for j in submitted]
    if not _idle(table, jobs):
        return None
    queued = sorted(
        (j for j in jobs if j.state == "SCHED" and j.priority > 0), key=job_order
    )
    if not queued:
        return None
    head, usable = queued[0], broker.resources.up
    if min_nodes.get(head.id, len(usable) + 1) > len(usable):
        return None
    where = "request held by the scheduler" if head.alloc_pending else "not sent"
    return SequenceFailure(
        f"{head.f58} ({where}) waits while nothing runs and its request fits "
        f"the {len(usable)} usable node(s) {sorted(usable)}: a pass that should "
        "have started it never came (was an event lost, a free that came "
        "during a pass?)",
        head.id,
    )


def idle_check(broker, submitted: list[int], min_nodes: dict[int, int]) -> None:
    """Let every running job end, drains and downs left as they are, then
    raise :func:`idle_problem`'s failure, if any: before the end checks
    bring every rank back and set off a pass that would hide it."""
    table = broker.jobs
    jobs = [table.job(j) for j in submitted]
    bound = 3600.0 + END_SLACK_PER_JOB * len(jobs)
    broker.run_until_condition(lambda: _idle(table, jobs), timeout=bound)
    broker.run_until_quiet()
    problem = idle_problem(broker, submitted, min_nodes)
    if problem is not None:
        raise problem


def end_checks(broker, link, submitted: list[int]) -> None:
    """Undrain, bring up and release everything, run to quiescence and
    check that every job is over, everything is free and the scheduler
    still answers; raise :class:`SequenceFailure` otherwise."""
    resources = broker.resources
    everything = set(resources.all_ranks)
    resources.undrain(everything)
    resources.set_up(everything)
    table = broker.jobs
    for jobid in submitted:
        job = table.job(jobid)
        if job.state == "SCHED" and job.urgency == 0:
            table.set_urgency(jobid, 16)
    broker.run_until_quiet()
    open_jobs = [table.job(j) for j in submitted if table.job(j).state != "INACTIVE"]
    bound = 3600.0 + END_SLACK_PER_JOB * len(open_jobs)

    def over():
        return not table.housekeeping.allocations and all(
            table.job(j).state == "INACTIVE" for j in submitted
        )

    broker.run_until_condition(over, timeout=bound)
    stuck = [table.job(j) for j in submitted if table.job(j).state == "SCHED"]
    if stuck:
        parts = [
            f"{j.f58} ({'request held by the scheduler' if j.alloc_pending else 'not sent'})"
            for j in stuck
        ]
        raise SequenceFailure(
            f"{len(stuck)} job(s) still in SCHED {bound:.0f} virtual seconds after "
            f"every rank came back, with nothing else running: {', '.join(parts)}",
            stuck[0].id,
        )
    running = [table.job(j).f58 for j in submitted if table.job(j).state == "RUN"]
    if running:
        raise SequenceFailure(f"jobs still running after {bound:.0f} s: {running}")
    held = table.allocated_ranks()
    if held:
        raise SequenceFailure(f"the job-manager still holds ranks {sorted(held)}")
    if link is None or link.state != "reactor":
        raise SequenceFailure("the scheduler module is not running at the end")
    _scheduler_holds_nothing(broker, link)


def _scheduler_holds_nothing(broker, link) -> None:
    try:
        status = broker.rpc("sched.resource-status", module=link.name, timeout=60.0)
    except TimeoutError:
        raise SequenceFailure(
            "the scheduler did not answer sched.resource-status at the end"
        ) from None
    except OSError:
        # No resource-status: the scheduler must still answer stats-get.
        try:
            broker.rpc(f"{link.name}.stats-get", module=link.name, timeout=60.0)
        except OSError:
            return
        except TimeoutError:
            raise SequenceFailure(
                "the scheduler answered neither sched.resource-status nor "
                "stats-get at the end"
            ) from None
        return
    allocated = (status or {}).get("allocated") or {}
    leaked = []
    for entry in (allocated.get("execution") or {}).get("R_lite", []):
        cores = (entry.get("children") or {}).get("core", "")
        if cores:
            leaked.append(f"rank {entry.get('rank')} cores {cores}")
    if leaked:
        raise SequenceFailure(
            "every job is over but the scheduler still counts as allocated: "
            + "; ".join(leaked)
        )


def printed_steps(lines: list[str]) -> list[str]:
    """The printed program, from ``state = ...`` to ``state.teardown()``,
    without the invariant checks; a step printed on several lines keeps
    its continuation lines."""
    checks = {f"state.{name}()" for name in INVARIANTS}
    out: list[str] = []
    inside = False
    for line in lines:
        if line.startswith("state = "):
            out, inside = [], True
        if not inside or line.strip() in checks:
            continue
        out.append(line.rstrip())
        if line.strip() == "state.teardown()":
            inside = False
    return out


def evidence_seq(broker, error: BaseException) -> int | None:
    """Where the evidence excerpt should point: the last ``sched.alloc``
    of the job the failure names, if it names one (else the end)."""
    jobid = getattr(inner_failure(error), "jobid", None)
    if broker is None or jobid is None:
        return None
    needle = f'"id":{jobid},'
    transcript = broker.transcript
    for seq in range(len(transcript) - 1, -1, -1):
        entry = transcript.entry(seq)
        if entry.topic == "sched.alloc" and entry.text.startswith("{" + needle):
            return seq
    return None


@contextlib.contextmanager
def shrink_limit(seconds: float):
    """Bound hypothesis's shrinking to *seconds* of wall time (its own
    limit, five minutes, is a module constant of its engine)."""
    try:
        from hypothesis.internal.conjecture import engine
    except ImportError:  # pragma: no cover - another hypothesis layout
        yield
        return
    old = getattr(engine, "MAX_SHRINKING_SECONDS", None)
    if old is None:  # pragma: no cover
        yield
        return
    engine.MAX_SHRINKING_SECONDS = seconds
    try:
        yield
    finally:
        engine.MAX_SHRINKING_SECONDS = old


def inner_failure(error: BaseException) -> BaseException:
    """The failure itself: hypothesis may wrap it (a Flaky error)."""
    nested = getattr(error, "exceptions", None)
    return nested[0] if nested else error


#: Said of a hypothesis ``Flaky`` error, whose own words ("Is your data
#: generation depending on external state?") speak to a test's author.
FLAKY = (
    "; replayed, the same operations did not get the same answers from the "
    "scheduler: what it does depends on more than them (what an earlier load "
    "left in the kit's process, which flux-core 0.88 would not keep, or time "
    "or randomness not taken from the broker)"
)


def describe(error: BaseException) -> str:
    """One line for the evidence: the failure's first line."""
    from hypothesis.errors import Flaky

    inner = inner_failure(error)
    kind = "" if isinstance(inner, SequenceFailure) else f"{type(inner).__name__}: "
    first = str(inner).splitlines()[0] if str(inner) else ""
    wrapped = "" if inner is error else f" ({type(error).__name__})"
    return f"{kind}{first}{wrapped}{FLAKY if isinstance(error, Flaky) else ''}"


__all__ = [
    "END_SLACK_PER_JOB",
    "INVARIANTS",
    "SequenceFailure",
    "describe",
    "end_checks",
    "evidence_seq",
    "inner_failure",
    "printed_steps",
    "shrink_limit",
]
