"""Probes of the robustness suite (see :mod:`conformance.probes`).

``robust.hostile-jobspecs``
    Submits, between normal jobs, every malformed jobspec of
    :mod:`conformance.probes.hostile_jobspecs`, one at a time, each first
    offered to ``feasibility.check`` (as an ingest validator would).  Each
    must be denied with a note; the normal jobs before and after must run
    to completion and the scheduler must keep answering.  A case the
    scheduler leaves pending, allocates, or dies on fails the clause, with
    the jobspec named.  If the module dies, the culprit is cancelled and
    the module loaded again, so every case gets a verdict.  The outcome of
    every case is in ``ctx.stats["hostile_outcomes"]`` (and the feasibility
    answers in ``ctx.stats["hostile_feasibility"]``).

``robust.random-sequences``
    Hypothesis stateful sequences over a loaded scheduler; see
    :mod:`conformance.probes.random_sequences`.
"""

from __future__ import annotations

import errno
from dataclasses import dataclass

from conformance.findings import Finding
from conformance.probes import ProbeContext, probe
from conformance.probes.hostile_jobspecs import HostileCase, cases
from conformance.probes.random_sequences import CLAUSE as RANDOM
from conformance.probes.random_sequences import run_sequences
from mock_broker.jobspec import make_jobspec
from mock_broker.machine import Machine

HOSTILE = "robust.hostile-jobspecs"

#: Virtual seconds each normal (and each wrongly allocated) job runs.
RUNTIME = 5.0
#: Virtual seconds the probe runs after each hostile submission.
STEP = 2.0
#: Virtual seconds allowed, after the last case, for everything to finish.
SETTLE = 3600.0
#: Normal jobs submitted before the first hostile one.
NORMAL_BEFORE = 3
#: Failures reported one finding each; the rest are summed up in one more.
MAX_FINDINGS = 12
#: Module reloads after crashes before the probe gives up on the rest.
MAX_RELOADS = 80

_TERMINAL = ("INACTIVE", "CLEANUP")


@dataclass
class _Problem:
    """One failure: its text, where in the transcript, the scheduler's
    traceback if it died, and the hostile case it concerns."""

    text: str
    seq: int | None = None
    traceback: str = ""
    case: str = ""


def _normal_jobspec() -> dict:
    return make_jobspec(slots=1, cores=1, duration=60.0)


def _alive(link) -> bool:
    return link is not None and link.state == "reactor"


def _answers(broker, link) -> str | None:
    """None if the module answers its stats-get; else what went wrong."""
    try:
        broker.rpc(f"{link.name}.stats-get", module=link.name, timeout=60.0)
    except OSError:
        return None  # an error response is still an answer
    except TimeoutError:
        return "did not answer stats-get within 60 virtual seconds"
    except KeyError:
        return "is no longer loaded"
    return None


def _feasibility(broker, link, jobspec) -> str:
    """Offer *jobspec* to ``feasibility.check``; a one-word outcome."""
    try:
        broker.rpc(
            "feasibility.check", {"jobspec": jobspec}, module=link.name, timeout=60.0
        )
    except OSError as exc:
        if exc.errno == errno.ENOSYS:
            return "no-service"
        return "rejected" if (exc.strerror or "").strip() else "rejected-no-message"
    except TimeoutError:
        return "no-answer"
    return "accepted"


class _HostileRun:
    """One run of the hostile-jobspecs probe on one broker."""

    def __init__(self, ctx: ProbeContext):
        self.ctx = ctx
        self.broker = ctx.new_broker(Machine.uniform(4, 4))
        self.link = ctx.load(self.broker)
        self.reloads = 0
        self.logs_seen = 0
        self.normal: list[tuple[int, str]] = []  # job id, "before"/case name
        self.hostile: list[tuple[HostileCase, int, int]] = []  # case, id, seq
        self.outcome: dict[str, str] = {}
        self.feasibility: dict[str, str] = {}
        self.problems: list[_Problem] = []

    def submit_normal(self, label: str) -> None:
        jobid = self.broker.jobs.submit(_normal_jobspec(), runtime=RUNTIME)
        self.normal.append((jobid, label))

    def crashed(self, case: HostileCase, jobid: int, where: str, seq: int) -> bool:
        """The module died on *case*: note it, cancel the culprit, load the
        module again.  False if it could not be loaded again."""
        self.outcome[case.name] = f"module exited ({where})"
        for entry in self.broker.transcript.entries(seq):
            if entry.kind == "event" and entry.text.startswith("module exited"):
                seq = entry.seq
                break
        errors = [
            text
            for _, name, level, text in self.broker.logs[self.logs_seen :]
            if level in ("err", "crit", "alert", "emerg")
        ]
        logged = f"; it logged: {errors[-1]}" if errors else ""
        self.problems.append(
            _Problem(
                f"the module exited while handling hostile jobspec "
                f"{case.summary()} ({where}{logged})",
                seq,
                self.broker.last_exit_traceback,
                case.name,
            )
        )
        if self.reloads >= MAX_RELOADS:
            return False
        self.reloads += 1
        if jobid >= 0 and self.broker.jobs.job(jobid).state == "SCHED":
            self.broker.jobs.cancel(jobid, "hostile case crashed the scheduler")
        try:
            self.link = self.ctx.load(self.broker)
        except Exception as exc:  # noqa: BLE001 - a module that will not reload
            self.problems.append(
                _Problem(f"the module could not be loaded again: {exc}")
            )
            return False
        return True

    def try_case(self, case: HostileCase) -> bool:
        """Feasibility check, submission and a short run for one case;
        False if the probe cannot go on."""
        broker = self.broker
        seq = len(broker.transcript)
        self.logs_seen = len(broker.logs)
        self.feasibility[case.name] = _feasibility(broker, self.link, case.jobspec)
        if not _alive(self.link):
            return self.crashed(case, -1, "in feasibility.check", seq)
        seq = len(broker.transcript)
        # runtime= is explicit: the job-manager model computes a default
        # runtime from the jobspec's duration and cannot read every hostile
        # jobspec (it raises on a non-dict jobspec, attributes or system).
        jobid = broker.jobs.submit(case.jobspec, runtime=RUNTIME)
        self.hostile.append((case, jobid, seq))
        self.submit_normal(case.name)
        broker.run_for(STEP)
        if not _alive(self.link):
            return self.crashed(case, jobid, "in sched.alloc", seq)
        return True

    def settle(self) -> None:
        """Run until every job has left SCHED and RUN, or SETTLE runs out."""
        jobs = self.broker.jobs.jobs

        def done():
            return all(j.state in _TERMINAL for j in jobs.values())

        self.broker.run_until_condition(done, timeout=SETTLE)

    def judge_hostile(self) -> None:
        for case, jobid, seq in self.hostile:
            if case.name in self.outcome:
                continue
            job = self.broker.jobs.job(jobid)
            notes = [n for kind, _, n in job.exceptions if kind == "alloc"]
            if job.result == "denied":
                if notes and str(notes[-1]).strip():
                    self.outcome[case.name] = "denied"
                    continue
                self.outcome[case.name] = "denied without a note"
                text = f"{job.f58}: denied without a note: {case.summary()}"
                seq = self._response_seq(jobid, seq)
            elif job.R is not None:
                self.outcome[case.name] = "allocated"
                text = (
                    f"{job.f58}: resources allocated to a malformed jobspec: "
                    f"{case.summary()}"
                )
                seq = self._response_seq(jobid, seq)
            elif job.state == "SCHED":
                self.outcome[case.name] = "left pending"
                text = (
                    f"{job.f58}: left pending (neither allocated nor denied) after "
                    f"{SETTLE:.0f} virtual seconds: {case.summary()}"
                )
            else:
                self.outcome[case.name] = f"ended: {job.result}"
                text = (
                    f"{job.f58}: ended without a deny ({job.result}): {case.summary()}"
                )
            self.problems.append(_Problem(text, seq, "", case.name))

    def _response_seq(self, jobid: int, start: int) -> int:
        """The transcript entry of the alloc response for *jobid* (or
        *start* if there is none)."""
        transcript = self.broker.transcript
        needle = f'{{"id":{jobid},'
        for seq in range(start, len(transcript)):
            entry = transcript.entry(seq)
            if entry.topic == "sched.alloc (response)" and entry.text.startswith(
                needle
            ):
                return seq
        return start

    def judge_normal(self) -> None:
        jobs = self.broker.jobs
        stuck = [
            (jobid, label)
            for jobid, label in self.normal
            if jobs.job(jobid).result != "completed"
        ]
        if not stuck:
            return
        jobid, label = stuck[0]
        job = jobs.job(jobid)
        if label == "before":
            when = "before the first hostile case"
        else:
            when = f"right after hostile case {label}"
        self.problems.append(
            _Problem(
                f"{len(stuck)} of {len(self.normal)} normal jobs did not run to "
                f"completion; the first, {job.f58} (submitted {when}), is "
                f"{job.state}" + (f" ({job.result})" if job.result else "")
            )
        )

    def judge_module(self) -> None:
        if not _alive(self.link):
            self.problems.append(_Problem("the module is not running at the end"))
            return
        problem = _answers(self.broker, self.link)
        if problem:
            self.problems.append(
                _Problem(f"after the hostile jobspecs the module {problem}")
            )

    def findings(self) -> list[Finding]:
        out = []
        for p in self.problems[:MAX_FINDINGS]:
            finding = self.ctx.fail(HOSTILE, p.text, self.broker, p.seq)
            if p.traceback and finding.evidence is not None:
                finding.evidence.traceback = p.traceback
            out.append(finding)
        rest = self.problems[MAX_FINDINGS:]
        if rest:
            names = ", ".join(p.case or p.text for p in rest)
            out.append(self.ctx.fail(HOSTILE, f"{len(rest)} more failures: {names}"))
        return out


@probe(HOSTILE, (HOSTILE,), budget=60.0, cost=3)
def hostile_jobspecs(ctx: ProbeContext) -> list[Finding]:
    """Malformed jobspecs among normal jobs: each must be denied with a
    note, the normal jobs must complete and the scheduler keep answering."""
    run = _HostileRun(ctx)
    for _ in range(NORMAL_BEFORE):
        run.submit_normal("before")
    tried = 0
    for case in cases():
        tried += 1
        if not run.try_case(case):
            break
    run.settle()
    run.judge_hostile()
    run.judge_normal()
    run.judge_module()
    ctx.stats["hostile_cases"] = tried
    ctx.stats["hostile_outcomes"] = dict(run.outcome)
    ctx.stats["hostile_feasibility"] = dict(run.feasibility)
    ctx.stats["module_reloads"] = run.reloads
    return run.findings()


@probe(RANDOM, (RANDOM,), budget=120.0, cost=8)
def random_sequences(ctx: ProbeContext) -> list[Finding]:
    """Hypothesis stateful operation sequences; every invariant after every
    step, and everything over, free and answering at the end."""
    return run_sequences(ctx)
