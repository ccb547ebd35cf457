"""Declarative RFC 27 scenarios in YAML, run against any scheduler module.

A scenario file describes a machine, jobs already running, a timeline of
steps (submissions, cancels, drains, restarts, ...) and what should come
of it.  :func:`load_scenario` validates a file (any mistake raises
:class:`ScenarioError` naming the file, the step and the key) and
:func:`run_scenario` runs it on a fresh :class:`~mock_broker.runtime.broker.MockBroker`
and returns a :class:`ScenarioResult`.  ``flux-schedkit run`` is the command
line for the same thing; the files under ``conformance/scenarios/library/``
(:func:`library_paths`) replay the RFC 27 sequences one by one.

.. rubric:: Schema

All times are virtual seconds since the broker started (``broker.elapsed``),
never absolute.  Ranks are given as an RFC 22 idset (``"0-3,7"``), an
integer, or a list of integers.  An unknown key anywhere is an error.

``name`` (optional)
    Defaults to the file name without ``.yaml``.

``description``
    What the scenario shows and why; free text.

``machine``
    Either the shorthand ``nodes``, ``cores``, ``gpus`` (default 0) and
    ``properties`` (a list), or ``groups``: a list of
    ``{count, cores, gpus, properties}``.  Optional ``prefix`` (hostname
    prefix, default ``node``) and ``expiration`` (instance end, 0 for none).
    Default: 4 nodes of 4 cores.

``broker``
    ``seed``, ``release_after`` (free ranks one by one this many seconds
    apart after a job ends, as housekeeping does), ``default_runtime``,
    ``epoch`` (virtual wall clock at start), ``config``.

``scheduler``
    ``path`` (a ``.py`` file relative to the scenario file, or a dotted
    module, optionally ``:Class``; ``flux-schedkit run --scheduler``
    overrides it) and ``args``, a list such as ``["queue-depth=2"]``.
    Arguments given on the command line replace those with the same
    ``key=``.

``running``
    Jobs holding resources before the scheduler is loaded, which its hello
    must take back.  Each has a ``name``, either ``ranks`` (the job holds
    those nodes whole) or a full ``R``, optionally the job shorthand below
    (by default one exclusive slot per node with all its cores),
    ``runtime``, ``user``, and
    ``released``: ranks housekeeping had already freed when the scheduler
    loaded.  Such a job has ended; hello reports it with ``free``, and its
    other ranks are freed by ``release`` (``[[delay, ranks], ...]``), else
    one every ``release_after`` seconds, else together after ``runtime``.

``steps``
    A list, in time order.  Each step has ``at: T`` or ``after: DT``
    (relative to the previous step; neither means the same time), an
    optional ``note``, and exactly one action:

    ``submit``
        ``name`` and either the shorthand ``nodes``, ``slots`` (default:
        one per node), ``cores`` (per slot), ``gpus`` (per slot),
        ``duration``, ``exclusive``, ``constraints`` (RFC 31), or a raw
        ``jobspec``; then optional ``runtime`` (default: the duration, else
        ``default_runtime``), ``urgency``, ``priority``, ``user`` and
        ``release`` (a housekeeping plan ``[[delay, ranks], ...]`` counted
        from the job's end).
    ``cancel``
        A job name, or ``{job, note}``: the user cancels the job.
    ``urgency``
        ``{job, urgency}``; urgency 0 holds the job.
    ``prioritize``
        ``{NAME: priority, ...}``: a priority plugin's batch update.
    ``update_expiration``
        ``{job, expiration}`` or ``{job, duration}`` (from the job's start):
        ``sched.expiration`` asks the scheduler to move the job's end.
    ``drain``, ``undrain``, ``down``, ``up``, ``shrink``
        Ranks.
    ``expiration``
        The instance's new expiration (0 for none).
    ``restart``, ``load``
        Reload the scheduler, or load it after an ``unload``; optional
        ``{args: [...]}`` replaces the arguments.
    ``unload``
        Remove the scheduler (no value).
    ``feasibility``
        A job shorthand or ``jobspec`` and ``expect``: ``ok``, or
        ``{error: TEXT}`` where TEXT must appear in the error.
    ``stats``
        ``keys`` that ``stats-get`` must return and ``values`` it must
        return exactly; optional ``module``.
    ``run_until_quiet``
        Run what is ready without moving the clock (no value).

    A step at time T acts after everything due at T has happened.

``clause`` (optional)
    The id of the conformance clause whose behaviour the scenario's
    expectations demonstrate (see ``flux-schedkit clauses``); an unmet
    expectation fails that clause.

``end`` (optional)
    Stop the run at this time.  By default the run goes on until the
    instance has settled: its own work done (no job to end, no step to
    come), and the scheduler's timers then armed have each fired once
    without it sending the broker a message (a timer that only logs, such
    as a periodic statistics line, does not keep a run going).  A
    scheduler whose timers keep sending messages never settles: after a
    virtual year the run stops with a failure that names what it sent and
    from which line.  So does a scenario whose own work goes on past a
    year (a job that long); give it an ``end``.

``expect``
    ``jobs``: per job name, any of ``state`` (SCHED, RUN, CLEANUP,
    INACTIVE), ``result`` (completed, timeout, canceled, exception, denied,
    or null), ``started_at`` and ``ended_at`` (null: never),
    ``annotations`` (exact; null for none), ``annotations_include`` (these
    keys with these values, recursively), ``annotations_absent`` (dotted
    keys such as ``sched.reason_pending`` that must be gone), ``denied``
    (text in the denial note), ``exception`` (an exception type the job
    got), ``ranks`` (the ranks of its R).  Checked when the run is over
    (see ``end``).

    ``violations``: referee violation kinds the scenario expects; each
    must occur, and any other kind fails the scenario (default: none).

    ``at``: a list of ``{time, jobs}`` blocks, the same job expectations
    checked when the clock reaches ``time``, after the steps at that time.

Every job name used in a step must be defined (by ``running`` or an
earlier ``submit``); a name in ``expect`` must be defined somewhere.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from conformance.scenarios.checks import check_job, describe_step, merge_args
from conformance.scenarios.schema import (
    Checkpoint,
    Scenario,
    ScenarioError,
    Step,
    load_scenario,
    parse_scenario,
)

if TYPE_CHECKING:
    from conformance.referee import Violation
    from mock_broker.runtime.broker import MockBroker

# The broker (which installs the flux-python substitute) is imported only
# when a scenario runs: loading and validating a file installs nothing.

__all__ = [
    "Scenario",
    "ScenarioError",
    "ScenarioResult",
    "library_paths",
    "load_scenario",
    "parse_scenario",
    "run_scenario",
]

#: How long the run may go on after the last step (virtual seconds).
SETTLE_LIMIT = 365 * 86400.0


def library_paths() -> list[Path]:
    """The scenario files shipped with the kit, sorted by name."""
    folder = Path(__file__).resolve().parent / "library"
    return sorted(folder.glob("*.yaml"))


@dataclass
class ScenarioResult:
    """The outcome of one run.

    Attributes:
        scenario: what was run.
        broker: the broker, after the run (transcript, jobs, referee).
        failures: every unmet expectation, one sentence each.
        violations: referee violations the scenario did not expect.
        load_error: set when the scheduler could not be loaded at all.
        job_ids: scenario job name -> job id.
        first_unmet: the transcript entry noting the first unmet
            expectation (at the moment it was found), or None.
    """

    scenario: Scenario
    broker: MockBroker
    failures: list[str] = field(default_factory=list)
    violations: list[Violation] = field(default_factory=list)
    load_error: str | None = None
    job_ids: dict[str, int] = field(default_factory=dict)
    first_unmet: int | None = None

    @property
    def passed(self) -> bool:
        """True if every expectation held and no unexpected violation occurred."""
        return not (self.failures or self.violations or self.load_error)

    def reasons(self) -> list[str]:
        """Human-readable reasons the run failed (empty if it passed)."""
        out = [self.load_error] if self.load_error else []
        out.extend(self.failures)
        out.extend(str(v) for v in self.violations)
        return out

    def transcript_lines(self) -> list[str]:
        """The readable transcript of the run."""
        return self.broker.transcript.lines()

    def transcript_jsonl(self) -> str:
        """The transcript as JSON lines, byte-identical across runs."""
        return self.broker.transcript.to_jsonl()


def run_scenario(
    scenario: Scenario | str | Path,
    scheduler: str | None = None,
    args: list[str] | None = None,
    prepare=None,
) -> ScenarioResult:
    """Run *scenario* (a :class:`Scenario` or a path) and check it.

    Args:
        scheduler: ``PATH.py`` or ``module`` with an optional ``:Class``;
            overrides the scenario's ``scheduler.path``.
        args: module arguments replacing the scenario's ones key by key.
        prepare: called with the new broker before anything runs (the
            kit uses it to apply its budgets).

    Raises:
        ScenarioError: the file is invalid, or no scheduler was named.
    """
    if not isinstance(scenario, Scenario):
        scenario = load_scenario(scenario)
    runner = _Runner(scenario, scheduler, list(args or []))
    if prepare is not None:
        prepare(runner.broker)
    return runner.run()


class _Runner:
    def __init__(self, scenario: Scenario, scheduler: str | None, args: list[str]):
        from conformance.referee import Referee
        from mock_broker.runtime.broker import MockBroker
        from mock_broker.runtime.clock import EPOCH

        self.scenario = scenario
        self.extra_args = args
        self.target = scheduler or _relative(scenario.path, scenario.scheduler_path)
        if self.target is None:
            raise ScenarioError(
                scenario.path,
                "scheduler.path",
                "no scheduler: name one here or with --scheduler",
            )
        options = dict(scenario.broker)
        self.epoch = options.setdefault("epoch", EPOCH)
        machine = scenario.machine
        if machine.expiration:
            machine = dataclasses.replace(
                machine, expiration=self.epoch + machine.expiration
            )
        self.broker = MockBroker(machine, **options)
        self.referee = Referee.attach(self.broker)
        self.result = ScenarioResult(scenario, self.broker)
        self.ids = self.result.job_ids

    # -- the run ---------------------------------------------------------------

    def run(self) -> ScenarioResult:
        try:
            self._run()
        finally:
            self.broker.close()
        return self.result

    def _run(self) -> None:
        from mock_broker.runtime.broker import BrokerStalled, BrokerUnsettled
        from mock_broker.runtime.module_host import ModuleLoadError

        for job in self.scenario.running:
            self._add_running(job)
        try:
            self.broker.load(
                self.target, merge_args(self.scenario.scheduler_args, self.extra_args)
            )
        except ModuleLoadError as exc:
            self.result.load_error = f"the scheduler failed to load: {exc}"
            return
        timeline = [(s.time, 0, s.number, s) for s in self.scenario.steps]
        timeline += [(c.time, 1, c.number, c) for c in self.scenario.checkpoints]
        for when, _, _, item in sorted(timeline, key=lambda t: t[:3]):
            self.broker.run_until(self.epoch + when)
            if isinstance(item, Step):
                self._step(item)
            else:
                self._checkpoint(item)
        if self.scenario.end is not None:
            self.broker.run_until(self.epoch + self.scenario.end)
        else:
            try:
                self.broker.run_until_settled(limit=SETTLE_LIMIT)
            except BrokerUnsettled as exc:
                # The module's doing, not the scenario's: say so to its author.
                self._fail("run", f"the scheduler never settled: {exc}")
            except BrokerStalled as exc:
                self._fail("run", f"did not settle ({exc}); set end: to stop it")
        for expectation in self.scenario.jobs:
            for problem in check_job(self.broker, self.ids, expectation, self.epoch):
                self._fail(f"expect.jobs.{expectation.name}", problem)
        self._check_violations()

    def _fail(self, where: str, text: str) -> None:
        self.result.failures.append(f"{where}: {text}")
        seq = self.broker.transcript.note("event", "scenario", f"UNMET {where}: {text}")
        if self.result.first_unmet is None:
            self.result.first_unmet = seq

    def _check_violations(self) -> None:
        expected = self.scenario.violations
        seen = self.referee.kinds()
        for kind in expected:
            if kind not in seen:
                self._fail(
                    "expect.violations", f"expected violation {kind!r} did not occur"
                )
        self.result.violations = [
            v for v in self.referee.violations if v.kind not in expected
        ]

    def _checkpoint(self, checkpoint: Checkpoint) -> None:
        where = f"expect.at[{checkpoint.number - 1}] (t={checkpoint.time:g})"
        self.broker.transcript.note("event", "scenario", f"check {where}")
        for expectation in checkpoint.jobs:
            for problem in check_job(self.broker, self.ids, expectation, self.epoch):
                self._fail(f"{where} {expectation.name}", problem)

    def _add_running(self, job) -> None:
        from flux.idset import IDset
        from flux.resource import Rv1Set

        if job.R is not None:
            R = job.R
        else:
            R = Rv1Set(self.broker.resources.R).copy_ranks(IDset(job.ranks)).to_dict()
            duration = job.jobspec["attributes"]["system"].get("duration", 0)
            R["execution"]["starttime"] = self.broker.now
            R["execution"]["expiration"] = (
                self.broker.now + duration if duration else 0.0
            )
        try:
            jobid = self.broker.jobs.add_running(
                R,
                job.jobspec,
                runtime=job.runtime,
                userid=job.userid,
                released=job.released,
                release=job.release,
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise ScenarioError(
                self.scenario.path, f"running.{job.name}", str(exc)
            ) from exc
        self.ids[job.name] = jobid
        state = "released " + str(IDset(job.released)) if job.released else "running"
        f58 = self.broker.jobs.job(jobid).f58
        self.broker.transcript.note(
            "event", "scenario", f"job {job.name} = {f58} ({state})"
        )

    # -- steps -------------------------------------------------------------------

    def _step(self, step: Step) -> None:
        where = f"step {step.number} ({step.action})"
        note = f"step {step.number}: {describe_step(step)}"
        self.broker.transcript.note("event", "scenario", note)
        try:
            getattr(self, f"_do_{step.action}")(step.value)
        except _Unmet as exc:
            self._fail(where, str(exc))
        except (OSError, ValueError, KeyError, RuntimeError, TimeoutError) as exc:
            self._fail(where, f"{type(exc).__name__}: {exc}")

    def _id(self, name: str) -> int:
        return self.ids[name]

    def _do_submit(self, v: dict) -> None:
        jobid = self.broker.jobs.submit(
            v["jobspec"],
            urgency=v.get("urgency", 16),
            priority=v.get("priority"),
            runtime=v.get("runtime"),
            userid=v.get("userid", 1000),
            release=v.get("release"),
        )
        self.ids[v["name"]] = jobid
        f58 = self.broker.jobs.job(jobid).f58
        self.broker.transcript.note("event", "scenario", f"job {v['name']} = {f58}")

    def _do_cancel(self, v: dict) -> None:
        self.broker.jobs.cancel(self._id(v["job"]), v["note"])

    def _do_urgency(self, v: dict) -> None:
        self.broker.jobs.set_urgency(self._id(v["job"]), v["urgency"])

    def _do_prioritize(self, v: dict) -> None:
        self.broker.jobs.prioritize({self._id(n): p for n, p in v.items()})

    def _do_update_expiration(self, v: dict) -> None:
        job = self.broker.jobs.job(self._id(v["job"]))
        if "duration" in v:
            if job.t_run is None:
                raise _Unmet(f"job {v['job']} has not started")
            when = job.t_run + v["duration"]
        else:
            when = self.epoch + v["expiration"]
        self.broker.jobs.update_expiration(job.id, when)

    def _do_drain(self, ranks) -> None:
        self.broker.resources.drain(set(ranks))

    def _do_undrain(self, ranks) -> None:
        self.broker.resources.undrain(set(ranks))

    def _do_down(self, ranks) -> None:
        self.broker.resources.set_down(set(ranks))

    def _do_up(self, ranks) -> None:
        self.broker.resources.set_up(set(ranks))

    def _do_shrink(self, ranks) -> None:
        self.broker.resources.shrink(set(ranks))

    def _do_expiration(self, when: float) -> None:
        self.broker.resources.set_expiration(self.epoch + when if when else 0.0)

    def _module_args(self, v: dict) -> list[str] | None:
        if v["args"] is None:
            return None
        return merge_args(v["args"], self.extra_args)

    def _do_restart(self, v: dict) -> None:
        from mock_broker.runtime.module_host import ModuleLoadError

        try:
            self.broker.restart_scheduler(self._module_args(v))
        except ModuleLoadError as exc:
            raise _Unmet(f"the scheduler failed to load again: {exc}") from exc

    def _do_load(self, v: dict) -> None:
        from mock_broker.runtime.module_host import ModuleLoadError

        args = self._module_args(v)
        if args is None:
            args = merge_args(self.scenario.scheduler_args, self.extra_args)
        try:
            self.broker.load(self.target, args)
        except ModuleLoadError as exc:
            raise _Unmet(f"the scheduler failed to load: {exc}") from exc

    def _do_unload(self, _v) -> None:
        self.broker.unload()

    def _do_run_until_quiet(self, _v) -> None:
        self.broker.run_until_quiet()

    def _do_feasibility(self, v: dict) -> None:
        error = self.broker.feasibility_check(v["jobspec"])
        if v["error"] is None and error is not None:
            raise _Unmet(f"expected the job to be feasible, got error {error!r}")
        if v["error"] is not None:
            if error is None:
                raise _Unmet(f"expected an error containing {v['error']!r}, got ok")
            if v["error"] not in error:
                raise _Unmet(
                    f"expected an error containing {v['error']!r}, got {error!r}"
                )

    def _do_stats(self, v: dict) -> None:
        stats = self.broker.stats(v["module"])
        problems = [f"no key {k!r}" for k in v["keys"] if k not in stats]
        for key, want in v["values"].items():
            if key not in stats:
                problems.append(f"no key {key!r}")
            elif stats[key] != want:
                problems.append(f"{key} is {stats[key]!r}, expected {want!r}")
        if problems:
            raise _Unmet("stats-get: " + "; ".join(problems))


class _Unmet(Exception):
    """A step's own expectation failed (feasibility, stats, ...)."""


def _relative(scenario_path: str, target: str | None) -> str | None:
    """A scheduler ``.py`` path given in a scenario is relative to the file."""
    if target is None:
        return None
    module, sep, cls = target.partition(":")
    if (module.endswith(".py") or "/" in module) and not os.path.isabs(module):
        base = os.path.dirname(os.path.abspath(scenario_path))
        module = os.path.normpath(os.path.join(base, module))
    return module + sep + cls
