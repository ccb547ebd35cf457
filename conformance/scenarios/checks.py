"""Checking a scenario's job expectations against the job-manager model.

Used by :mod:`conformance.scenarios.runner`; each check returns sentences a
person can act on ("state is SCHED, expected RUN"), never raises.
"""

from __future__ import annotations

from typing import Any

from conformance.scenarios.schema import JobExpectation, Step

#: Two virtual times closer than this are equal.
TIME_TOLERANCE = 1e-6


def merge_args(base: list[str], extra: list[str]) -> list[str]:
    """Module arguments *base* with *extra* applied: an extra ``key=value``
    replaces the base argument with the same key, others are appended."""
    out = list(base)
    for arg in extra:
        key = arg.split("=", 1)[0]
        for i, old in enumerate(out):
            if old.split("=", 1)[0] == key:
                out[i] = arg
                break
        else:
            out.append(arg)
    return out


def check_job(
    broker, ids: dict[str, int], expectation: JobExpectation, epoch: float
) -> list[str]:
    """Return what is wrong with one job, compared with *expectation*."""
    jobid = ids.get(expectation.name)
    if jobid is None:
        return ["the job was never submitted (its step failed or has not run yet)"]
    job = broker.jobs.job(jobid)
    problems = []
    for key, want in expectation.checks.items():
        problem = _CHECKS[key](job, want, epoch)
        if problem:
            problems.append(f"{key}: {problem}")
    return problems


def _state(job, want, epoch) -> str | None:
    return None if job.state == want else f"is {job.state}, expected {want}"


def _result(job, want, epoch) -> str | None:
    return None if job.result == want else f"is {job.result}, expected {want}"


def _time(value: float | None, want: float | None, epoch: float) -> str | None:
    got = None if value is None else value - epoch
    if want is None:
        return None if got is None else f"is {got:g}, expected never"
    if got is None:
        return f"never happened, expected {want:g}"
    if abs(got - want) > TIME_TOLERANCE:
        return f"is {got:g}, expected {want:g}"
    return None


def _started_at(job, want, epoch) -> str | None:
    return _time(job.t_run, want, epoch)


def _ended_at(job, want, epoch) -> str | None:
    return _time(job.t_end, want, epoch)


def _annotations(job, want, epoch) -> str | None:
    if job.annotations == want:
        return None
    return f"are {job.annotations!r}, expected {want!r}"


def _annotations_include(job, want, epoch) -> str | None:
    missing = _not_included(job.annotations or {}, want, "")
    if missing:
        return f"{missing} (annotations are {job.annotations!r})"
    return None


def _not_included(have: Any, want: dict, prefix: str) -> str | None:
    for key, value in want.items():
        path = f"{prefix}{key}"
        if not isinstance(have, dict) or key not in have:
            return f"{path} is missing"
        if isinstance(value, dict):
            problem = _not_included(have[key], value, path + ".")
            if problem:
                return problem
        elif have[key] != value:
            return f"{path} is {have[key]!r}, expected {value!r}"
    return None


def _annotations_absent(job, want, epoch) -> str | None:
    present = []
    for path in want:
        node: Any = job.annotations or {}
        for part in path.split("."):
            node = node.get(part, _MISSING) if isinstance(node, dict) else _MISSING
        if node is not _MISSING:
            present.append(f"{path}={node!r}")
    return f"still present: {', '.join(present)}" if present else None


_MISSING = object()


def _denied(job, want, epoch) -> str | None:
    if job.result != "denied":
        return f"the job was not denied (result {job.result})"
    notes = [note for kind, _, note in job.exceptions if kind == "alloc"]
    if not any(note and want in note for note in notes):
        return f"denial note {notes[-1] if notes else ''!r} lacks {want!r}"
    return None


def _exception(job, want, epoch) -> str | None:
    kinds = [kind for kind, _, _ in job.exceptions]
    return None if want in kinds else f"no {want!r} exception (got {kinds})"


def _ranks(job, want, epoch) -> str | None:
    from flux.idset import IDset

    from mock_broker.jobmanager.jobs import R_lite_entries

    if job.R is None:
        return f"the job has no R, expected ranks {IDset(want)}"
    # The scheduler wrote R: compare ranges, never expand them (a rank
    # list can name billions of ranks), and say so if R cannot be read.
    got = IDset()
    try:
        for entry in R_lite_entries(job.R):
            got.add(entry.get("rank", ""))
    except (ValueError, TypeError) as exc:
        return f"cannot be read from the job's R ({exc}), expected {IDset(want)}"
    if str(got) != str(IDset(want)):
        return f"are {got}, expected {IDset(want)}"
    return None


_CHECKS = {
    "state": _state,
    "result": _result,
    "started_at": _started_at,
    "ended_at": _ended_at,
    "annotations": _annotations,
    "annotations_include": _annotations_include,
    "annotations_absent": _annotations_absent,
    "denied": _denied,
    "exception": _exception,
    "ranks": _ranks,
}


def describe_step(step: Step) -> str:
    """A one-line account of *step* for the transcript."""
    v = step.value
    text = step.action
    if step.action == "submit":
        text = f"submit {v['name']}"
    elif isinstance(v, dict) and "job" in v:
        text = f"{step.action} {v['job']}"
        rest = {k: x for k, x in v.items() if k not in ("job", "note")}
        if rest:
            text += " " + " ".join(f"{k}={x:g}" for k, x in rest.items())
        if v.get("note", "cancel by user") != "cancel by user":
            text += f" ({v['note']})"
    elif step.action == "prioritize":
        text += " " + " ".join(f"{n}={p}" for n, p in v.items())
    elif isinstance(v, list):
        from flux.idset import IDset

        text += f" {IDset(v)}"
    elif isinstance(v, float):
        text += f" {v:g}"
    elif isinstance(v, dict) and v.get("args") is not None:
        text += f" {' '.join(v['args'])}"
    if step.note:
        text += f" ({step.note})"
    return text
