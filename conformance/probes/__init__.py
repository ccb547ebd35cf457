"""Probes: the procedures that drive a scheduler and judge clauses.

A probe runs one experiment on fresh mock brokers (a library scenario, a
random operation sequence, a policy workload, ...) inside the kit's child
process, and returns findings for the clauses it *covers*.  Besides those,
every broker a probe makes through :meth:`ProbeContext.new_broker` is
watched by the referee, whose violations fail the clauses that name their
kind (:func:`conformance.clauses.clause_for_kind`); :func:`judge` merges
both into the probe's findings.

Register a probe with the :func:`probe` decorator in one of
:data:`PROBE_MODULES`.  A probe function takes a :class:`ProbeContext` and
returns a list of :class:`~conformance.findings.Finding` (a covered clause
with no finding of its own passes if the probe returns normally).
"""

from __future__ import annotations

import importlib
import shlex
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from conformance.clauses import (
    OCCASIONS,
    clause_for_kind,
    load_clauses,
    referee_clauses,
)
from conformance.findings import FAIL, Evidence, Finding, failed, not_applicable, passed

#: Modules that define probes; importing them fills :data:`PROBES`.
PROBE_MODULES = (
    "conformance.probes.scenarios",
    "conformance.probes.protocol",
    "conformance.probes.protocol_alloc",
    "conformance.probes.policy",
    "conformance.probes.robustness",
    "conformance.probes.scale",
)


@dataclass(frozen=True)
class Probe:
    """A registered probe.

    Attributes:
        name: stable, unique; library scenarios are ``scenario:<stem>``.
        covers: clause ids the probe judges itself.
        run: the probe function.
        budget: wall seconds the probe may take before it counts as hung.
        policies: declared policies it applies to (empty: every scheduler).
        cost: relative cost, so expensive probes are started first.
    """

    name: str
    covers: tuple[str, ...]
    run: Callable[[ProbeContext], list[Finding] | None]
    budget: float = 30.0
    policies: tuple[str, ...] = ()
    cost: int = 1

    def applies_to(self, policy: str) -> bool:
        return not self.policies or policy in self.policies

    def judges(self) -> tuple[str, ...]:
        """Every clause this probe can give a verdict on."""
        return tuple(dict.fromkeys(self.covers + referee_clauses()))


PROBES: dict[str, Probe] = {}


def probe(
    name: str,
    covers: Iterable[str],
    *,
    budget: float = 30.0,
    policies: Iterable[str] = (),
    cost: int = 1,
):
    """Register the decorated function as probe *name*."""

    def register(fn):
        add_probe(Probe(name, tuple(covers), fn, budget, tuple(policies), cost))
        return fn

    return register


def add_probe(p: Probe) -> None:
    """Register *p* (its clauses must exist in the registry)."""
    clauses = load_clauses()
    unknown = [c for c in p.covers if c not in clauses]
    if unknown:
        raise ValueError(f"probe {p.name}: unknown clauses {unknown}")
    if p.name in PROBES:
        raise ValueError(f"probe {p.name} registered twice")
    PROBES[p.name] = p


def all_probes() -> dict[str, Probe]:
    """Every registered probe, by name (imports :data:`PROBE_MODULES`).

    Probe modules use flux-python, so this installs the substitute for its
    native layer first (a no-op where a real libflux is importable).
    """
    from mock_broker import flux_substitute

    flux_substitute.install()
    for module in PROBE_MODULES:
        importlib.import_module(module)
    return PROBES


def apply_limits(broker, limits: dict) -> None:
    """Apply the kit's per-instant budgets in *limits*
    (``messages_per_instant``, ``iterations_per_instant``) to *broker*."""
    messages = limits.get("messages_per_instant")
    if messages:
        broker.max_messages_per_instant = messages
    iterations = limits.get("iterations_per_instant")
    if iterations:
        broker.max_iterations_per_instant = iterations


@dataclass
class ProbeContext:
    """What a probe needs: the scheduler under test and helpers.

    Attributes:
        probe: the probe's name (for evidence).
        target: the scheduler, as ``flux module load`` takes it
            (``PATH.py``, ``pkg.module``, either with ``:Class``).
        args: module arguments given by the user.
        policy: the declared policy.
        seed: seeds every random choice of the probe.
        examples: how many random examples a randomized probe tries.
        limits: budgets the brokers enforce (``messages_per_instant``,
            ``iterations_per_instant``).
    """

    probe: str
    target: str
    args: list[str]
    policy: str = "any"
    seed: int = 0
    examples: int = 20
    limits: dict = field(default_factory=dict)
    brokers: list = field(default_factory=list)
    stats: dict = field(default_factory=dict)

    def new_broker(self, machine=None, **kwargs):
        """A fresh :class:`~mock_broker.runtime.broker.MockBroker` with the
        referee attached and the kit's budgets applied."""
        from mock_broker.runtime.broker import MockBroker

        return self.adopt(MockBroker(machine, seed=self.seed, **kwargs))

    def adopt(self, broker):
        """Watch a broker made elsewhere (for example by the scenario
        runner): attach the referee if it has none, apply budgets."""
        from conformance.referee import Referee

        if not isinstance(broker.observer, Referee):
            Referee.attach(broker)
        apply_limits(broker, self.limits)
        self.brokers.append(broker)
        return broker

    def module_args(self, extra: Iterable[str] = ()) -> list[str]:
        """The user's arguments, with *extra* replacing same-key ones."""
        from conformance.scenarios.checks import merge_args

        return merge_args(list(extra), self.args)

    def load(self, broker, extra_args: Iterable[str] = ()):
        """Load the scheduler under test into *broker*."""
        return broker.load(self.target, self.module_args(extra_args))

    def fail(self, clause: str, text: str, broker=None, seq=None) -> Finding:
        """A failed finding with the transcript around *seq* (default: the
        end of *broker*'s transcript)."""
        evidence = {}
        if broker is not None:
            transcript = broker.transcript
            when = broker.elapsed
            if seq is None:
                seq = len(transcript) - 1
            elif 0 <= seq < len(transcript):
                when = transcript.entry(seq).time  # the moment pointed at
            evidence = {"time": when, "excerpt": transcript.excerpt(seq)}
        return failed(clause, self.probe, text, **evidence)

    def passed(self, clause: str) -> Finding:
        return passed(clause)


def judge(p: Probe, ctx: ProbeContext, returned, error: BaseException | None):
    """The probe's findings: what it returned, the referee's violations on
    its brokers, and a pass for each covered clause nothing failed.

    If the probe itself raised (*error*), its covered clauses fail with the
    traceback: a probe raises only when the scheduler left it no way on
    (an rpc that never got an answer, a module that would not load).
    """
    findings: list[Finding] = list(returned or [])
    for broker in ctx.brokers:
        findings.extend(referee_findings(ctx.probe, broker))
    if error is not None:
        text = f"the probe could not go on: {type(error).__name__}: {error}"
        tb = "".join(traceback.format_exception(error))
        for clause in p.covers:
            findings.append(
                Finding(clause, FAIL, Evidence(ctx.probe, text, traceback=tb))
            )
        return findings
    judged = {f.clause for f in findings}
    clauses = load_clauses()
    for clause in p.judges():
        if clause in judged:
            continue
        occasion = clauses[clause].exercised_by
        if clause in p.covers or not occasion or _saw(ctx.brokers, occasion):
            findings.append(passed(clause))
        else:
            # Nothing it is about happened here: no verdict, and a reason
            # should no probe give one.
            text = f"not exercised: no probe saw {OCCASIONS[occasion]}"
            findings.append(not_applicable(clause, ctx.probe, text))
    return findings


def _saw(brokers, occasion: str) -> bool:
    """Whether the referee of one of *brokers* saw *occasion*."""
    return any(
        getattr(broker.observer, "saw", lambda _: False)(occasion) for broker in brokers
    )


def referee_findings(probe: str, broker, first_only: bool = False) -> list[Finding]:
    """A failed finding for each referee violation on *broker* that a
    clause judges (with *first_only*, the first of each clause)."""
    kinds = clause_for_kind()
    out: list[Finding] = []
    seen: set[str] = set()
    for v in getattr(broker.observer, "violations", ()):
        clause = kinds.get(v.kind)
        if clause is None or (first_only and clause in seen):
            continue
        seen.add(clause)
        out.append(
            Finding(
                clause,
                FAIL,
                Evidence(
                    probe,
                    f"[{v.kind}] {v.text}",
                    v.time,
                    v.excerpt,
                    _module_traceback(broker, v.kind),
                ),
            )
        )
    return out


def _module_traceback(broker, kind: str) -> str:
    if kind != "module-exited":
        return ""
    return getattr(broker, "last_exit_traceback", "") or ""


def split_args(text: str) -> list[str]:
    """``--args "queue-depth=8 log-level=7"`` as a list."""
    return shlex.split(text or "")


__all__ = [
    "PROBES",
    "PROBE_MODULES",
    "Probe",
    "ProbeContext",
    "add_probe",
    "all_probes",
    "execute",
    "failures",
    "judge",
    "probe",
    "referee_findings",
    "split_args",
]


def execute(
    name: str,
    target: str,
    args: Iterable[str] = (),
    *,
    policy: str = "any",
    seed: int = 0,
    examples: int = 20,
    limits: dict | None = None,
) -> tuple[list[Finding], dict]:
    """Run probe *name* on *target* in this process and judge it.

    Returns the findings and the probe's statistics (``ctx.stats``).  This
    is what the kit's child process calls; tests call it directly.  No
    isolation here: a hostile scheduler can hang or kill the caller.

    A kit budget that trips inside the probe is not the probe's failure: a
    :class:`~mock_broker.runtime.broker.BrokerLivelock` fails
    ``robust.no-livelock`` (with the transcript's end) and a
    :class:`MemoryError` fails ``robust.memory``; the probe's own clauses
    then get no verdict.  A livelock is often a protocol fault going round
    (a second SUCCESS answered with a free, again and again): the first
    referee violation of each clause on the broker that livelocked fails
    that clause as well.
    """
    from mock_broker.runtime.broker import BrokerLivelock

    p = all_probes()[name]
    ctx = ProbeContext(
        name, target, list(args), policy, seed, examples, dict(limits or {})
    )
    returned, error, budget = None, None, None
    try:
        returned = p.run(ctx)
    except BrokerLivelock as exc:
        broker = getattr(exc, "broker", None) or (ctx.brokers or [None])[-1]
        budget = [ctx.fail("robust.no-livelock", str(exc), broker)]
        if broker is not None:
            budget += referee_findings(ctx.probe, broker, first_only=True)
    except MemoryError as exc:
        traceback.clear_frames(exc.__traceback__)
        tb = "".join(traceback.format_exception(exc))
        budget = [failed("robust.memory", name, "out of memory", traceback=tb)]
    except Exception as exc:  # noqa: BLE001 - judged as the probe's failure
        error = exc
    finally:
        for broker in ctx.brokers:
            try:
                broker.close()
            except Exception:  # noqa: BLE001 - a module that will not unload
                pass
    if budget is not None:
        return budget, ctx.stats
    return judge(p, ctx, returned, error), ctx.stats


def failures(findings: Iterable[Finding]) -> dict[str, list[Finding]]:
    """Failed findings grouped by clause id."""
    out: dict[str, list[Finding]] = {}
    for f in findings:
        if f.verdict == FAIL:
            out.setdefault(f.clause, []).append(f)
    return out
