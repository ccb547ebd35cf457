"""Read and validate a scenario file into plain data (no broker involved).

:func:`parse_scenario` turns the YAML text of a scenario into a
:class:`Scenario`; every departure from the schema documented in
:mod:`conformance.scenarios.runner` raises :class:`ScenarioError`, naming the
file, the step (1-based) where there is one, and the key.  Validation is
complete before anything runs, so a typo never surfaces halfway through a
run.  This module imports neither flux-python nor the broker.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from conformance.scenarios.reader import (
    SHAPE_KEYS,
    Reader,
    ScenarioError,
    join_key,
    new_job_name,
    read_jobspec,
    read_release_plan,
    show,
)
from mock_broker.machine import Machine, NodeGroup

__all__ = [
    "Checkpoint",
    "JobExpectation",
    "RunningJob",
    "Scenario",
    "ScenarioError",
    "Step",
    "load_scenario",
    "parse_scenario",
]

#: Job states a scenario may expect, as the job-manager model names them.
STATES = ("SCHED", "RUN", "CLEANUP", "INACTIVE")
#: Job results a scenario may expect (``null`` for none yet).
RESULTS = ("completed", "timeout", "canceled", "exception", "denied")
#: Step actions, each with the kind of value it takes.
ACTIONS = (
    "submit",
    "cancel",
    "urgency",
    "prioritize",
    "update_expiration",
    "drain",
    "undrain",
    "down",
    "up",
    "shrink",
    "expiration",
    "restart",
    "unload",
    "load",
    "feasibility",
    "stats",
    "run_until_quiet",
)
_JOB_EXPECT_KEYS = (
    "state",
    "result",
    "started_at",
    "ended_at",
    "annotations",
    "annotations_include",
    "annotations_absent",
    "denied",
    "exception",
    "ranks",
)


@dataclass
class RunningJob:
    """A job holding resources before the scheduler is loaded."""

    name: str
    jobspec: dict
    ranks: list[int] | None
    R: dict | None
    released: list[int] | None
    runtime: float | None
    userid: int
    release: list | None


@dataclass
class Step:
    """One timed action; ``time`` is virtual seconds since the start."""

    number: int
    time: float
    action: str
    value: Any
    note: str | None = None


@dataclass
class JobExpectation:
    """What one job should look like; only the keys given are checked."""

    name: str
    checks: dict[str, Any]


@dataclass
class Checkpoint:
    """Job expectations checked once the clock reaches ``time``."""

    number: int
    time: float
    jobs: list[JobExpectation]


@dataclass
class Scenario:
    """A validated scenario file."""

    path: str
    name: str
    description: str
    machine: Machine
    broker: dict[str, Any]
    scheduler_path: str | None
    scheduler_args: list[str]
    running: list[RunningJob] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    jobs: list[JobExpectation] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    checkpoints: list[Checkpoint] = field(default_factory=list)
    end: float | None = None
    clause: str | None = None


# -- top level ----------------------------------------------------------------

_TOP_KEYS = ("name", "description", "machine", "broker", "scheduler", "running")
_TOP_KEYS += ("steps", "end", "expect", "clause")


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate the scenario file at *path*."""
    path = str(path)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as exc:
        raise ScenarioError(path, "(file)", exc.strerror or str(exc)) from exc
    except UnicodeDecodeError as exc:
        raise ScenarioError(path, "(file)", "not a text file (UTF-8)") from exc
    return parse_scenario(text, path)


def parse_scenario(text: str, path: str = "<scenario>") -> Scenario:
    """Validate the YAML *text* of a scenario; *path* names it in errors."""
    r = Reader(path)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "(yaml)"
        problem = getattr(exc, "problem", None) or str(exc)
        raise ScenarioError(path, where, f"not valid YAML: {problem}") from exc
    if data is None:
        # Nothing but blanks and comments: a truncated or wrong file, not
        # a scenario that checks nothing and passes.
        raise ScenarioError(path, "(file)", "empty: no scenario in it")
    r.mapping(data, "", _TOP_KEYS)
    stem = Path(path).stem
    name = r.string(data["name"], "name") if "name" in data else stem
    description = data.get("description", "")
    if not isinstance(description, str):
        r.fail("description", f"expected text, got {show(description)}")
    broker = _broker(r, data.get("broker", {}))
    machine = _machine(r, data.get("machine"))
    sched_path, sched_args = _scheduler(r, data.get("scheduler", {}))
    known: set[str] = set()
    running = _running(r, data.get("running", []), known, machine)
    steps = _steps(r, data.get("steps", []), known)
    scenario = Scenario(
        path, name, description.strip(), machine, broker, sched_path, sched_args
    )
    scenario.running, scenario.steps = running, steps
    _expect(r, data.get("expect", {}), known, scenario)
    if "clause" in data:
        scenario.clause = r.string(data["clause"], "clause")
    if "end" in data:
        scenario.end = r.number(data["end"], "end")
        times = [s.time for s in steps] + [c.time for c in scenario.checkpoints]
        if times and scenario.end < max(times):
            r.fail("end", f"{scenario.end:g} is before the last step or check")
    return scenario


def _broker(r: Reader, value) -> dict:
    allowed = ("seed", "release_after", "default_runtime", "epoch", "config")
    r.mapping(value, "broker", allowed)
    out: dict[str, Any] = {}
    if "seed" in value:
        out["seed"] = r.integer(value["seed"], "broker.seed")
    if value.get("release_after") is not None:
        out["release_after"] = r.number(value["release_after"], "broker.release_after")
    if "default_runtime" in value:
        out["default_runtime"] = r.number(
            value["default_runtime"], "broker.default_runtime", positive=True
        )
    if "epoch" in value:
        out["epoch"] = r.number(value["epoch"], "broker.epoch")
    if "config" in value:
        out["config"] = r.mapping(value["config"], "broker.config", value["config"])
    return out


def _machine(r: Reader, value) -> Machine:
    if value is None:
        return Machine.uniform(4, 4)
    shorthand = ("nodes", "cores", "gpus", "properties")
    r.mapping(value, "machine", ("groups", "prefix", "expiration", *shorthand))
    prefix = r.string(value.get("prefix", "node"), "machine.prefix")
    expiration = r.number(value.get("expiration", 0), "machine.expiration")
    if "groups" in value:
        for k in shorthand:
            if k in value:
                r.fail(f"machine.{k}", "give either groups or nodes/cores/gpus")
        if not isinstance(value["groups"], list) or not value["groups"]:
            r.fail("machine.groups", "expected a non-empty list of node groups")
        groups = [
            _group(
                r, g, f"machine.groups[{i}]", ("count", "cores", "gpus", "properties")
            )
            for i, g in enumerate(value["groups"])
        ]
    else:
        groups = [_group(r, value, "machine", shorthand, count_key="nodes")]
    # The scenario's expiration is relative; the broker adds its epoch.
    return Machine(tuple(groups), prefix, expiration)


def _group(r: Reader, value, key, allowed, count_key="count") -> NodeGroup:
    if key != "machine":
        r.mapping(value, key, allowed)
    for k in (count_key, "cores"):
        if k not in value:
            r.fail(join_key(key, k), "is required")
    count = r.integer(value[count_key], join_key(key, count_key), lo=1)
    cores = r.integer(value["cores"], join_key(key, "cores"), lo=1)
    gpus = r.integer(value.get("gpus", 0), join_key(key, "gpus"))
    props = tuple(r.strings(value.get("properties", []), join_key(key, "properties")))
    return NodeGroup(count, cores, gpus, props)


def _scheduler(r: Reader, value) -> tuple[str | None, list[str]]:
    r.mapping(value, "scheduler", ("path", "args"))
    path = r.string(value["path"], "scheduler.path") if "path" in value else None
    return path, r.strings(value.get("args", []), "scheduler.args")


def _running(r: Reader, value, known: set[str], machine: Machine) -> list[RunningJob]:
    if not isinstance(value, list):
        r.fail("running", "expected a list of jobs")
    allowed = ("name", "ranks", "R", "released", "runtime", "user", "release")
    out = []
    for i, item in enumerate(value):
        key = f"running[{i}]"
        r.mapping(item, key, allowed + SHAPE_KEYS, required=("name",))
        name = new_job_name(r, item["name"], f"{key}.name", known)
        if ("ranks" in item) == ("R" in item):
            r.fail(key, "give exactly one of ranks or R")
        ranks = r.idset(item["ranks"], f"{key}.ranks") if "ranks" in item else None
        R = r.mapping(item["R"], f"{key}.R", item["R"]) if "R" in item else None
        if ranks is not None and ranks[-1] >= machine.size:
            r.fail(f"{key}.ranks", f"the machine has ranks 0-{machine.size - 1}")
        spec = dict(item)
        if ranks is not None and not any(k in item for k in SHAPE_KEYS):
            # The job holds whole nodes: one slot of all the cores on each.
            group = machine.group_of(ranks[0])
            spec.update(nodes=len(ranks), cores=group.cores, exclusive=True)
        jobspec = read_jobspec(r, spec, key)
        released = None
        if "released" in item:
            released = r.idset(item["released"], f"{key}.released")
            if ranks is not None and (
                set(released) - set(ranks) or set(released) == set(ranks)
            ):
                r.fail(f"{key}.released", "must be some, not all, of the job's ranks")
        runtime = None
        if "runtime" in item:
            runtime = r.number(item["runtime"], f"{key}.runtime")
        release = None
        if "release" in item:
            release = read_release_plan(r, item["release"], f"{key}.release")
        user = r.integer(item.get("user", 1000), f"{key}.user")
        out.append(
            RunningJob(name, jobspec, ranks, R, released, runtime, user, release)
        )
    return out


# -- steps ------------------------------------------------------------------------


def _steps(r: Reader, value, known: set[str]) -> list[Step]:
    if not isinstance(value, list):
        r.fail("steps", "expected a list of steps")
    steps, now = [], 0.0
    for i, item in enumerate(value):
        r.step = i + 1
        if not isinstance(item, dict):
            r.fail("(step)", f"expected a mapping, got {show(item)}")
        r.mapping(item, "", ("at", "after", "note", *ACTIONS))
        if "at" in item and "after" in item:
            r.fail("after", "give at or after, not both")
        if "at" in item:
            when = r.number(item["at"], "at")
            if when < now:
                r.fail("at", f"time {when:g} is before the previous step ({now:g})")
        else:
            when = now + r.number(item.get("after", 0), "after")
        actions = [k for k in item if k in ACTIONS]
        if len(actions) != 1:
            r.fail(
                "(action)",
                "each step needs exactly one action, got "
                + (", ".join(actions) or "none")
                + f" (actions: {', '.join(ACTIONS)})",
            )
        note = r.string(item["note"], "note") if "note" in item else None
        action = actions[0]
        parsed = _ACTION_PARSERS[action](r, item[action], action, known)
        steps.append(Step(i + 1, when, action, parsed, note))
        now = when
    r.step = None
    return steps


def _submit(r: Reader, value, key, known):
    allowed = ("name", "runtime", "urgency", "priority", "user", "release")
    r.mapping(value, key, allowed + SHAPE_KEYS, required=("name",))
    out: dict[str, Any] = {"jobspec": read_jobspec(r, value, key)}
    if "runtime" in value:
        out["runtime"] = r.number(value["runtime"], f"{key}.runtime")
    if "urgency" in value:
        out["urgency"] = r.integer(value["urgency"], f"{key}.urgency", 0, 31)
    if "priority" in value:
        out["priority"] = r.integer(value["priority"], f"{key}.priority", 0, 2**32 - 1)
    if "user" in value:
        out["userid"] = r.integer(value["user"], f"{key}.user")
    if "release" in value:
        out["release"] = read_release_plan(r, value["release"], f"{key}.release")
    out["name"] = new_job_name(r, value["name"], f"{key}.name", known)
    return out


def _cancel(r: Reader, value, key, known):
    if isinstance(value, str):
        return {"job": r.job_name(value, key, known), "note": "cancel by user"}
    r.mapping(value, key, ("job", "note"), required=("job",))
    note = r.string(value.get("note", "cancel by user"), f"{key}.note")
    return {"job": r.job_name(value["job"], f"{key}.job", known), "note": note}


def _urgency(r: Reader, value, key, known):
    r.mapping(value, key, ("job", "urgency"), required=("job", "urgency"))
    return {
        "job": r.job_name(value["job"], f"{key}.job", known),
        "urgency": r.integer(value["urgency"], f"{key}.urgency", 0, 31),
    }


def _prioritize(r: Reader, value, key, known):
    if not isinstance(value, dict) or not value:
        r.fail(key, "expected a mapping of job name to priority")
    return {
        r.job_name(name, f"{key}.{name}", known): r.integer(
            p, f"{key}.{name}", 0, 2**32 - 1
        )
        for name, p in value.items()
    }


def _update_expiration(r: Reader, value, key, known):
    r.mapping(value, key, ("job", "expiration", "duration"), required=("job",))
    if ("expiration" in value) == ("duration" in value):
        r.fail(key, "give exactly one of expiration or duration")
    which = "expiration" if "expiration" in value else "duration"
    return {
        "job": r.job_name(value["job"], f"{key}.job", known),
        which: r.number(value[which], f"{key}.{which}"),
    }


def _ranks(r: Reader, value, key, known):
    return r.idset(value, key)


def _expiration(r: Reader, value, key, known):
    return r.number(value, key)


def _nothing(r: Reader, value, key, known):
    if value not in (None, {}):
        r.fail(key, f"takes no value, got {show(value)}")
    return None


def _module_args(r: Reader, value, key, known):
    if value is None:
        return {"args": None}
    r.mapping(value, key, ("args",))
    args = r.strings(value["args"], f"{key}.args") if "args" in value else None
    return {"args": args}


def _feasibility(r: Reader, value, key, known):
    r.mapping(value, key, ("expect", *SHAPE_KEYS), required=("expect",))
    expect = value["expect"]
    if expect == "ok":
        error = None
    elif isinstance(expect, dict):
        r.mapping(expect, f"{key}.expect", ("error",), required=("error",))
        error = r.string(expect["error"], f"{key}.expect.error")
    else:
        r.fail(f"{key}.expect", f"expected ok or {{error: TEXT}}, got {show(expect)}")
    return {"jobspec": read_jobspec(r, value, key), "error": error}


def _stats(r: Reader, value, key, known):
    r.mapping(value, key, ("keys", "values", "module"))
    out: dict[str, Any] = {"keys": r.strings(value.get("keys", []), f"{key}.keys")}
    values = value.get("values", {})
    out["values"] = r.mapping(values, f"{key}.values", values)
    out["module"] = (
        r.string(value["module"], f"{key}.module") if "module" in value else None
    )
    return out


_ACTION_PARSERS = {
    "submit": _submit,
    "cancel": _cancel,
    "urgency": _urgency,
    "prioritize": _prioritize,
    "update_expiration": _update_expiration,
    "drain": _ranks,
    "undrain": _ranks,
    "down": _ranks,
    "up": _ranks,
    "shrink": _ranks,
    "expiration": _expiration,
    "restart": _module_args,
    "unload": _nothing,
    "load": _module_args,
    "feasibility": _feasibility,
    "stats": _stats,
    "run_until_quiet": _nothing,
}


# -- expectations -----------------------------------------------------------------


def _expect(r: Reader, value, known: set[str], scenario: Scenario) -> None:
    r.mapping(value, "expect", ("jobs", "violations", "at"))
    scenario.jobs = _job_expectations(r, value.get("jobs", {}), "expect.jobs", known)
    scenario.violations = r.strings(value.get("violations", []), "expect.violations")
    at = value.get("at", [])
    if not isinstance(at, list):
        r.fail("expect.at", "expected a list of {time, jobs} blocks")
    for i, block in enumerate(at):
        key = f"expect.at[{i}]"
        r.mapping(block, key, ("time", "jobs"), required=("time", "jobs"))
        when = r.number(block["time"], f"{key}.time")
        jobs = _job_expectations(r, block["jobs"], f"{key}.jobs", known)
        scenario.checkpoints.append(Checkpoint(i + 1, when, jobs))


def _job_expectations(r: Reader, value, key, known) -> list[JobExpectation]:
    if not isinstance(value, dict):
        r.fail(key, "expected a mapping of job name to expectations")
    out = []
    for name, checks in value.items():
        jkey = f"{key}.{name}"
        r.job_name(name, jkey, known)
        r.mapping(checks, jkey, _JOB_EXPECT_KEYS)
        parsed: dict[str, Any] = {}
        for k, v in checks.items():
            parsed[k] = _job_check(r, k, v, f"{jkey}.{k}")
        out.append(JobExpectation(name, parsed))
    return out


def _job_check(r: Reader, k: str, v, key: str):
    if k == "state":
        if not isinstance(v, str) or v.upper() not in STATES:
            r.fail(key, f"expected one of {', '.join(STATES)}, got {show(v)}")
        return v.upper()
    if k == "result":
        if v is not None and v not in RESULTS:
            r.fail(key, f"expected one of {', '.join(RESULTS)} or null, got {show(v)}")
        return v
    if k in ("started_at", "ended_at"):
        return None if v is None else r.number(v, key)
    if k == "annotations":
        return None if v is None else r.mapping(v, key, v)
    if k == "annotations_include":
        return r.mapping(v, key, v)
    if k == "annotations_absent":
        return r.strings(v, key)
    if k == "ranks":
        return r.idset(v, key)
    if k == "denied" and v is True:
        return ""  # any non-empty note
    return r.string(v, key)  # denied, exception
