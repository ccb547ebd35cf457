"""Probes of the protocol suite: loading and the scheduler interface.

Each probe loads the scheduler under test into fresh mock brokers, drives
one part of RFC 27 and reads the transcript.  The alloc-protocol probes
(cancel, free, feasibility, expiration, constraints, request shapes,
infeasible jobs) are in :mod:`conformance.probes.protocol_alloc`; the
library scenarios (:mod:`conformance.probes.scenarios`) and the referee,
which watches every broker, judge the rest of the suite.

The helpers here (:func:`load`, :func:`requests_from`, :func:`submit`, ...)
are shared by both modules.
"""

from __future__ import annotations

import errno
import json

from conformance.probes import ProbeContext, probe

#: Virtual seconds a probe waits for an answer to an rpc it sends.
ANSWER_TIMEOUT = 10.0

#: The job-manager's topics for the scheduler's side of the handshake.
HELLO, READY = "job-manager.sched-hello", "job-manager.sched-ready"


def load(ctx: ProbeContext, broker, extra_args=()):
    """Load the scheduler; return ``(link, None)`` or ``(None, error text)``."""
    from mock_broker.runtime.module_host import ModuleLoadError

    try:
        return ctx.load(broker, extra_args), None
    except ModuleLoadError as exc:
        return None, f"the scheduler failed to load: {exc}"


def load_or_fail(ctx: ProbeContext, broker, clauses, extra_args=()):
    """Load the scheduler; on failure return ``(None, findings)`` failing
    each of *clauses* (they cannot be judged on a module that did not load)."""
    link, error = load(ctx, broker, extra_args)
    if link is None:
        return None, [ctx.fail(c, error, broker) for c in clauses]
    return link, []


def requests_from(broker, source: str, topic: str, start: int = 0):
    """Transcript entries of requests *source* sent on *topic*, with their
    decoded payloads: ``[(entry, payload), ...]``."""
    out = []
    for entry in broker.transcript.entries(start):
        if entry.kind == "msg" and entry.source == source and entry.topic == topic:
            out.append((entry, _decode(entry.text)))
    return out


def responses_to(broker, dest: str, topic: str, start: int = 0):
    """Transcript entries of responses sent to *dest* on *topic*."""
    prefix = f"{topic} (response)"
    return [
        e
        for e in broker.transcript.entries(start)
        if e.kind == "msg" and e.dest == dest and e.topic.startswith(prefix)
    ]


def responses_from(broker, source: str, topic: str, start: int = 0):
    """Transcript entries of responses *source* sent on *topic*, decoded:
    ``[(entry, payload), ...]``."""
    prefix = f"{topic} (response)"
    return [
        (e, _decode(e.text))
        for e in broker.transcript.entries(start)
        if e.kind == "msg" and e.source == source and e.topic.startswith(prefix)
    ]


def _decode(text: str):
    try:
        return json.loads(text) if text else None
    except ValueError:
        return text


def jobspec(**shape) -> dict:
    """A V1 jobspec (see :func:`mock_broker.jobspec.make_jobspec`)."""
    from mock_broker.jobspec import make_jobspec

    return make_jobspec(**shape)


def submit(broker, runtime: float = 10.0, urgency: int = 16, **shape) -> int:
    """Submit a job of *shape* that runs *runtime* virtual seconds."""
    return broker.jobs.submit(jobspec(**shape), urgency=urgency, runtime=runtime)


def describe(broker, jobid: int) -> str:
    """A job as evidence text: id, state and result."""
    job = broker.jobs.job(jobid)
    return f"{job.f58} ({job.state}, {job.result or 'no result'})"


def alive(link) -> bool:
    """True while the module sits in its reactor."""
    return link is not None and link.state == "reactor"


def exit_text(link) -> str:
    """How the module ended, for evidence."""
    error = getattr(link, "exit_error", None)
    return "it exited" if error is None else f"it exited: {error!r}"


# -- load ----------------------------------------------------------------------


@probe("protocol:entry-point", ["load.entry-point"], budget=10.0)
def entry_point(ctx: ProbeContext):
    """Resolve the module as ``flux module load`` does: import it, then find
    ``mod_main`` or its one scheduler class (or the ``:Class`` named)."""
    from mock_broker import flux_substitute

    flux_substitute.install()
    from mock_broker.runtime.module_host import ModuleLoadError, resolve

    try:
        spec = resolve(ctx.target)
    except ModuleLoadError as exc:
        return [ctx.fail("load.entry-point", f"flux module load would fail: {exc}")]
    if not callable(spec.entry):
        # Found by name, as flux-core finds it; calling it is what fails.
        kind = type(spec.entry).__name__
        text = f"flux module load would fail: mod_main is not callable (a {kind})"
        return [ctx.fail("load.entry-point", text)]
    return []


@probe("protocol:reaches-reactor", ["load.reaches-reactor"], budget=10.0)
def reaches_reactor(ctx: ProbeContext):
    """Load with the given (else default) arguments; the module must enter
    its reactor and still be there after a quiet minute."""
    broker = ctx.new_broker()
    link, out = load_or_fail(ctx, broker, ["load.reaches-reactor"])
    if link is None:
        return out
    broker.run_for(60.0)
    if not alive(link):
        return [
            ctx.fail(
                "load.reaches-reactor",
                f"the module left its reactor while idle: {exit_text(link)}",
                broker,
            )
        ]
    return []


# -- hello and ready ------------------------------------------------------------


@probe("protocol:hello", ["hello.partial-ok"], budget=10.0)
def hello(ctx: ProbeContext):
    """The hello request must stream and carry ``partial-ok: true``."""
    clause = "hello.partial-ok"
    broker = ctx.new_broker()
    link, error = load(ctx, broker)
    broker.run_until_quiet()
    name = link.name if link is not None else _loaded_name(broker)
    sent = requests_from(broker, name, HELLO) if name else []
    if not sent:
        text = "the module never sent job-manager.sched-hello"
        return [ctx.fail(clause, f"{text} ({error})" if error else text, broker)]
    entry, payload = sent[0]
    partial = payload.get("partial-ok") if isinstance(payload, dict) else None
    if partial is not True:
        return [
            ctx.fail(
                clause,
                f"the hello request carries partial-ok={partial!r}, not true: "
                "the job-manager drops partially released jobs from its answer",
                broker,
                entry.seq,
            )
        ]
    for response in responses_to(broker, name, HELLO, entry.seq):
        if response.errnum == errno.EPROTO:
            return [
                ctx.fail(
                    clause,
                    "the hello request does not stream (FLUX_RPC_STREAMING): "
                    "the job-manager refused it with EPROTO",
                    broker,
                    response.seq,
                )
            ]
    return []


def _loaded_name(broker) -> str | None:
    """The name of the module the broker loaded, from the transcript."""
    for entry in broker.transcript.entries():
        if entry.kind == "event" and entry.text.startswith("module load "):
            return entry.text.split()[2]
    return None


def _ready(broker, name: str | None):
    """The module's first sched-ready request: ``(entry, payload)`` or None."""
    sent = requests_from(broker, name, READY) if name else []
    return sent[0] if sent else None


def _mode_problem(payload) -> str | None:
    if not isinstance(payload, dict):
        return f"payload {payload!r} is not an object"
    mode = payload.get("mode")
    if mode == "unlimited":
        return None
    if mode == "limited":
        limit = payload.get("limit")
        if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0:
            return None
        return f"mode limited with limit {limit!r} (a positive integer is required)"
    return f"mode {mode!r} (limited or unlimited is required)"


@probe("protocol:ready-mode", ["ready.mode"], budget=10.0)
def ready_mode(ctx: ProbeContext):
    """sched-ready must announce ``limited`` with a positive integer limit,
    or ``unlimited``."""
    broker = ctx.new_broker()
    link, error = load(ctx, broker)
    broker.run_until_quiet()
    name = link.name if link is not None else _loaded_name(broker)
    found = _ready(broker, name)
    if found is None:
        text = "the module never sent job-manager.sched-ready"
        return [ctx.fail("ready.mode", f"{text} ({error})" if error else text, broker)]
    entry, payload = found
    problem = _mode_problem(payload)
    if problem is not None:
        return [
            ctx.fail(
                "ready.mode", f"sched-ready announces {problem}", broker, entry.seq
            )
        ]
    return []


@probe("protocol:queue-depth", ["ready.queue-depth"], budget=10.0)
def queue_depth(ctx: ProbeContext):
    """``queue-depth=3`` must give ``limited`` 3 and ``queue-depth=unlimited``
    ``unlimited``; refusing the argument fails."""
    clause = "ready.queue-depth"
    out = []
    for arg, want in (
        ("queue-depth=3", {"mode": "limited", "limit": 3}),
        ("queue-depth=unlimited", {"mode": "unlimited"}),
    ):
        broker = ctx.new_broker()
        link, error = load(ctx, broker, [arg])
        if link is None:
            out.append(ctx.fail(clause, f"loaded with {arg}, {error}", broker))
            continue
        broker.run_until_quiet()
        found = _ready(broker, link.name)
        if found is None:
            out.append(ctx.fail(clause, f"loaded with {arg}, no sched-ready", broker))
            continue
        entry, payload = found
        got = {k: payload.get(k) for k in want} if isinstance(payload, dict) else None
        if got != want or (want["mode"] == "unlimited" and "limit" in payload):
            out.append(
                ctx.fail(
                    clause,
                    f"loaded with {arg}, sched-ready says {payload!r}, expected "
                    f"{want!r}",
                    broker,
                    entry.seq,
                )
            )
    return out


# -- stats ----------------------------------------------------------------------


@probe("protocol:stats", ["stats.answers"], budget=10.0)
def stats(ctx: ProbeContext):
    """``<module>.stats-get`` must be answered with an object, idle and with
    a job waiting."""
    clause = "stats.answers"
    broker = ctx.new_broker()
    link, out = load_or_fail(ctx, broker, [clause])
    if link is None:
        return out
    broker.run_until_quiet()
    for when in ("idle", "with jobs running and waiting"):
        if when != "idle":
            submit(broker, runtime=100.0, nodes=4, slots=4, cores=4)
            submit(broker, runtime=10.0, nodes=4, slots=4, cores=4)
            broker.run_for(1.0)
        topic = f"{link.name}.stats-get"
        if not alive(link):
            return [
                ctx.fail(clause, f"before {topic} ({when}), {exit_text(link)}", broker)
            ]
        try:
            answer = broker.rpc(topic, module=link.name, timeout=ANSWER_TIMEOUT)
        except TimeoutError:
            text = f"{topic} ({when}) was not answered in {ANSWER_TIMEOUT:g} s"
            return [ctx.fail(clause, text, broker)]
        except OSError as exc:
            text = f"{topic} ({when}) was answered with an error: {exc}"
            return [ctx.fail(clause, text, broker)]
        if not isinstance(answer, dict):
            text = f"{topic} ({when}) was answered with {answer!r}, not an object"
            return [ctx.fail(clause, text, broker)]
    return []
