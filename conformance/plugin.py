"""The conformance kit as a pytest plugin (entry point ``pytest11``).

Inert unless ``--scheduler`` (or its unambiguous spelling
``--schedkit-scheduler``) is given; then pytest collects
:mod:`conformance.suite`, one test per probe, runs each probe in the kit's
child process (:mod:`conformance.runner`), prints the clause table and the
evidence of every failure, and writes the certificate and JUnit XML if
asked.  Every pytest habit works on it: ``-x``, ``--lf``, ``-n auto``,
``-k`` (on probe names), ``--junitxml`` (per probe).

Options (all but ``--scheduler`` carry the ``schedkit-`` prefix so they
cannot clash with another plugin's):

``--scheduler PATH.py|pkg.module[:Class]``
    The scheduler to certify.  ``--schedkit-scheduler`` is the same; if
    another plugin already owns ``--scheduler``, only that spelling exists.
``--schedkit-args "queue-depth=8 ..."``
    Module arguments.
``--schedkit-policy fifo|easy|conservative|any``
    The declared policy (default ``any``: the policy suite is not
    applicable).
``--schedkit-clause PATTERN``
    Judge only clauses whose id matches (fnmatch; repeatable; a pattern
    without wildcards also matches as a prefix, ``alloc`` is ``alloc.*``).
``--schedkit-seed N``, ``--schedkit-examples N``
    Seed of every random choice; examples per randomized probe.
``--schedkit-certificate FILE.json``, ``--schedkit-junit FILE.xml``
    Write the certificate / clause-level JUnit XML.
``--schedkit-callback-budget S``, ``--schedkit-probe-budget S``
    Override the wall budgets per callback and per probe.
"""

from __future__ import annotations

import datetime as _dt
import fnmatch
import json
import os
import shlex
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from conformance.clauses import GENERIC_CLAUSES, POLICIES, load_clauses
from conformance.findings import Finding, failed
from conformance.verdicts import ProbeRecord, verdicts

SUITE_PATH = str(Path(__file__).resolve().parent / "suite.py")
DEFAULT_EXAMPLES = 20


@dataclass
class KitState:
    """One certification run, kept in ``config.stash``."""

    target: str
    args: list[str]
    policy: str
    seed: int
    examples: int
    selected: set[str]
    patterns: list[str] | None
    probes: list[str]
    budgets: object
    started: str = ""
    t0: float = 0.0
    interrupted: bool = False
    records: list[ProbeRecord] = field(default_factory=list)
    results: list = field(default_factory=list)
    wall: float = 0.0
    #: What became of the certificate and JUnit files, a line each.
    written: list[str] = field(default_factory=list)
    #: The probes this run was to run (after pytest's own deselection), once
    #: collected; a probe among them without a record was lost.
    expected: list[str] | None = None


STATE_KEY = pytest.StashKey[KitState]()


def pytest_addoption(parser):
    group = parser.getgroup("schedkit", "flux-schedkit conformance kit")
    kw = dict(
        dest="schedkit_scheduler",
        metavar="PATH[:Class]",
        default=None,
        help="certify this Flux scheduler module (PATH.py or pkg.module, "
        "optionally :Class)",
    )
    try:
        group.addoption("--schedkit-scheduler", "--scheduler", **kw)
    except ValueError:  # another plugin owns --scheduler
        group.addoption("--schedkit-scheduler", **kw)
    group.addoption(
        "--schedkit-args",
        default="",
        metavar="ARGS",
        help='module arguments, e.g. "queue-depth=8"',
    )
    group.addoption(
        "--schedkit-policy",
        default="any",
        metavar="POLICY",
        help="declared policy: " + ", ".join(POLICIES),
    )
    group.addoption(
        "--schedkit-clause",
        action="append",
        default=None,
        metavar="PATTERN",
        help="judge only clauses matching PATTERN",
    )
    group.addoption(
        "--schedkit-checked",
        action="store_true",
        default=False,
        help="the module was already imported with its arguments "
        "(flux-schedkit conform does it to word its own usage errors)",
    )
    group.addoption("--schedkit-seed", type=int, default=0, metavar="N")
    group.addoption(
        "--schedkit-examples",
        type=int,
        default=DEFAULT_EXAMPLES,
        metavar="N",
        help="examples per randomized probe",
    )
    group.addoption("--schedkit-certificate", default=None, metavar="FILE")
    group.addoption("--schedkit-junit", default=None, metavar="FILE")
    group.addoption(
        "--schedkit-callback-budget", type=float, default=None, metavar="SECONDS"
    )
    group.addoption(
        "--schedkit-probe-budget", type=float, default=None, metavar="SECONDS"
    )


def select_clauses(patterns: list[str] | None) -> set[str]:
    """Clause ids matching any of *patterns* (all if None), plus the
    clauses the runner judges on every probe (budgets, crashes): whatever
    runs is judged on those, so a hang or crash is never hidden by a
    selection.

    Raises:
        pytest.UsageError: a pattern matches no clause.
    """
    ids = list(load_clauses())
    if not patterns:
        return set(ids)
    chosen: set[str] = set()
    for raw in patterns:
        for pattern in filter(None, (p.strip() for p in raw.split(","))):
            hits = [
                c
                for c in ids
                if fnmatch.fnmatchcase(c, pattern)
                or (not any(ch in pattern for ch in "*?[") and c.startswith(pattern))
            ]
            if not hits:
                raise pytest.UsageError(f"--clause {pattern!r} matches no clause")
            chosen.update(hits)
    return chosen | set(GENERIC_CLAUSES)


def select_probes(selected: set[str], policy: str) -> list[str]:
    """Probes that apply to *policy* and judge a selected clause, most
    expensive first (so parallel workers finish together)."""
    from conformance.probes import all_probes

    chosen = []
    wanted = set(selected) - set(GENERIC_CLAUSES)
    if not wanted:  # only budget clauses asked for: every probe judges them
        wanted = set(GENERIC_CLAUSES)
    for p in all_probes().values():
        if not p.applies_to(policy):
            continue
        if wanted & (set(p.judges()) | set(GENERIC_CLAUSES)):
            chosen.append(p)
    chosen.sort(key=lambda p: (-p.cost, p.name))
    return [p.name for p in chosen]


def usage_problem(
    target: str, args_text: str, policy: str, importing: bool = True
) -> str | None:
    """What the kit refuses before any clause runs, as one line: a policy
    it does not know, ``--args`` it cannot split, and (if *importing*) a
    module that does not import or refuses its arguments at load although
    it loads without them (:func:`conformance.runner.preflight`); None if
    there is nothing.  A module that hangs or crashes at import is left to
    the clauses."""
    from conformance.runner import preflight

    if policy not in POLICIES:
        return f"--policy {policy!r} is not one of: " + ", ".join(POLICIES)
    try:
        args = shlex.split(args_text or "")
    except ValueError as exc:
        return f"--args: {exc}"
    return preflight(target, args) if importing else None


def pytest_configure(config):
    target = config.getoption("schedkit_scheduler", None)
    if not target:
        return
    from conformance.runner import Budgets

    policy = config.getoption("schedkit_policy")
    args_text = config.getoption("schedkit_args")
    # Imported once, by the controller (not by xdist workers), unless the
    # command line that started pytest did it already.
    importing = not hasattr(config, "workerinput") and not config.getoption(
        "schedkit_checked"
    )
    problem = usage_problem(target, args_text, policy, importing)
    if problem is not None:
        raise pytest.UsageError(problem)
    args = shlex.split(args_text or "")
    examples = config.getoption("schedkit_examples")
    if examples < 1:
        raise pytest.UsageError(f"--examples {examples}: must be at least 1")
    patterns = config.getoption("schedkit_clause")
    selected = select_clauses(patterns)
    budgets = Budgets()
    if config.getoption("schedkit_callback_budget"):
        budgets.callback_wall = config.getoption("schedkit_callback_budget")
    if config.getoption("schedkit_probe_budget"):
        budgets.probe_wall = config.getoption("schedkit_probe_budget")
    state = KitState(
        target=target,
        args=args,
        policy=policy,
        seed=config.getoption("schedkit_seed"),
        examples=examples,
        selected=selected,
        patterns=patterns,
        probes=select_probes(selected, policy),
        budgets=budgets,
        started=_dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        t0=time.perf_counter(),
    )
    config.stash[STATE_KEY] = state
    _trap_sigterm(config)
    if config.args_source != pytest.Config.ArgsSource.ARGS:
        config.args[:] = [SUITE_PATH]
    elif SUITE_PATH not in config.args:
        config.args.append(SUITE_PATH)


def _absolute(target: str) -> str:
    """A module file's path as the probes load it: absolute, since a module
    may change the working folder of the worker (``os.chdir``) before the
    next probe loads it there.  A dotted module name is kept; reports show
    the target as given."""
    path, colon, cls = target.partition(":")
    if path.endswith(".py") or os.sep in path:
        return os.path.abspath(path) + colon + cls
    return target


def _terminated(signum, frame):
    raise KeyboardInterrupt


_PREVIOUS_SIGTERM = pytest.StashKey[object]()


def _trap_sigterm(config) -> None:
    """SIGTERM (``timeout``, a CI job cancelled) ends the run as Ctrl-C
    does: the runner stops its child processes and removes its folder.
    Only where nobody else handles SIGTERM."""
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        config.stash[_PREVIOUS_SIGTERM] = signal.signal(signal.SIGTERM, _terminated)


def pytest_unconfigure(config):
    previous = config.stash.get(_PREVIOUS_SIGTERM, None)
    if previous is not None:
        signal.signal(signal.SIGTERM, previous)


def _state(config) -> KitState | None:
    return config.stash.get(STATE_KEY, None)


def pytest_generate_tests(metafunc):
    if "schedkit_probe" not in metafunc.fixturenames:
        return
    state = _state(metafunc.config)
    names = state.probes if state is not None else []
    metafunc.parametrize("schedkit_probe", names, ids=names)


@pytest.fixture(scope="session")
def schedkit_state(request) -> KitState:
    state = _state(request.config)
    if state is None:
        pytest.skip("no --scheduler given")
    return state


@pytest.fixture(scope="session")
def schedkit_runner(schedkit_state):
    from conformance.runner import Runner

    s = schedkit_state
    with Runner(
        _absolute(s.target),
        s.args,
        policy=s.policy,
        seed=s.seed,
        examples=s.examples,
        budgets=s.budgets,
    ) as runner:
        yield runner


def _probe_of(nodeid: str) -> str | None:
    """The probe a kit test id names (``suite.py::test_probe[NAME]``)."""
    head, mark, rest = nodeid.partition("::test_probe[")
    if not mark or not rest.endswith("]") or not head.endswith("suite.py"):
        return None
    return rest[:-1]


def pytest_collection_finish(session):
    state = _state(session.config)
    if state is not None and not hasattr(session.config, "workerinput"):
        state.expected = [
            p for p in (_probe_of(item.nodeid) for item in session.items) if p
        ]


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node, ids):
    """Under xdist the controller collects nothing: each node says what it
    will run (every node collects the same tests)."""
    state = _state(node.config)
    if state is not None and state.expected is None:
        state.expected = [p for p in map(_probe_of, ids) if p]


def pytest_runtest_logreport(report):
    if report.failed and report.when != "call":
        # No call phase: xdist's "worker crashed while running" report.
        probe = _probe_of(report.nodeid)
        if probe is not None:
            _crashes.setdefault(probe, str(report.longrepr).strip()[:2000])
    if report.when != "call":
        return
    for name, value in report.user_properties:
        if name != "schedkit":
            continue
        data = json.loads(value)
        _pending.append(
            ProbeRecord(
                data["probe"],
                [Finding.from_dict(f) for f in data["findings"]],
                data["wall"],
                data["stats"],
            )
        )


def pytest_collectreport(report):
    """Kept: why the kit's own test module could not be collected (it did
    not import, say), said in one line instead of a verdict.  A test file
    of the user's run beside the kit is pytest's to report."""
    if not report.failed or not _root:
        return
    path = report.nodeid.partition("::")[0]
    if not path or Path(_root[0], path).resolve() != Path(SUITE_PATH):
        return
    lines = [ln.strip() for ln in str(report.longrepr).splitlines()]
    last = next((ln for ln in reversed(lines) if ln), "unknown error")
    _collect_errors.append(last.removeprefix("E").strip())


# Reports arrive through a hook without the config; they are moved into
# the run's state at the end.  One pytest session at a time per process.
_pending: list[ProbeRecord] = []
_crashes: dict[str, str] = {}
_collect_errors: list[str] = []
_root: list[Path] = []  # the session's rootdir, which node ids are relative to


def pytest_sessionstart(session):
    _pending.clear()
    _crashes.clear()
    _collect_errors.clear()
    _root[:] = [session.config.rootpath]


def lost_probes(
    expected: list[str] | None, records: list[ProbeRecord], crashes: dict[str, str]
) -> list[ProbeRecord]:
    """A record failing ``robust.no-crash`` for each *expected* probe that
    left no record: the process running it died (a module that killed
    the kit's test process, say) or the run lost it.  A run with a lost
    probe is never certified."""
    done = {r.probe for r in records}
    out = []
    for probe in expected or ():
        if probe in done:
            continue
        done.add(probe)
        what = crashes.get(probe) or (
            "it never reported a result (the process running it ended, or "
            "the run stopped before it ran)"
        )
        text = (
            f"The probe did not complete: {what}.  Its clauses were not judged, "
            "so the run cannot pass."
        )
        out.append(ProbeRecord(probe, [failed("robust.no-crash", probe, text)], 0, {}))
    return out


@pytest.hookimpl(wrapper=True)
def pytest_runtestloop(session):
    """Ctrl-C while the probes run ends the run as interrupted, said in the
    kit's own words (:func:`pytest_terminal_summary`) instead of pytest's
    KeyboardInterrupt banner, whose location points into the kit and
    blames nobody useful.  pytest's own stops (``-x``, ``--maxfail``) and
    the xdist workers' loops are left as pytest runs them."""
    state = _state(session.config)
    if state is None or hasattr(session.config, "workerinput"):
        return (yield)
    try:
        return (yield)
    except KeyboardInterrupt as exc:
        if isinstance(exc, session.Interrupted):
            raise
        state.interrupted = True
        return True


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session):
    """Judge the clauses and write the certificate and JUnit files, here
    where the run's exit status can still change: a file that cannot be
    written fails the run in one line (the summary shows it)."""
    state = _state(session.config)
    if state is None:
        return
    if state.interrupted:
        session.exitstatus = pytest.ExitCode.INTERRUPTED
    if hasattr(session.config, "workerinput"):
        return
    if _collect_errors and not state.interrupted:
        # pytest calls it an interrupt; it is the kit that failed.
        session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
        return
    if session.exitstatus == pytest.ExitCode.INTERRUPTED:
        return
    from conformance.certificate import write_json, write_junit

    config = session.config
    state.records = list(_pending)
    if not (session.shouldfail or session.shouldstop):  # -x and the like
        lost = lost_probes(state.expected, state.records, _crashes)
        if lost:
            state.records += lost
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
    state.results = verdicts(
        state.records, policy=state.policy, selected=state.selected
    )
    state.wall = time.perf_counter() - state.t0
    writers = {
        "certificate": (
            config.getoption("schedkit_certificate"),
            lambda path: write_json(path, _cert(state)),
        ),
        "JUnit XML": (
            config.getoption("schedkit_junit"),
            lambda path: write_junit(path, state.results, state.target),
        ),
    }
    for what, (path, write) in writers.items():
        if not path:
            continue
        try:
            write(path)
        except OSError as exc:
            reason = exc.strerror or str(exc)
            state.written.append(f"cannot write the {what} {path}: {reason}")
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        else:
            state.written.append(f"{what} written to {path}")


def _cert(state: KitState) -> dict:
    from conformance.certificate import build_certificate

    return build_certificate(
        target=state.target,
        args=state.args,
        policy=state.policy,
        seed=state.seed,
        examples=state.examples,
        selected=sorted(state.selected) if state.patterns else None,
        started=state.started,
        wall=state.wall,
        results=state.results,
        records=state.records,
    )


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    state = _state(config)
    if state is None or hasattr(config, "workerinput"):
        return
    from conformance.report import write_report

    if _collect_errors and not state.interrupted:
        terminalreporter.write_line(
            "flux-schedkit conformance: the kit could not collect its probes: "
            f"{_collect_errors[0]}; no verdict, no certificate"
        )
        return
    if state.interrupted or exitstatus == pytest.ExitCode.INTERRUPTED:
        # No verdict from a partial run: no table, no certificate.
        terminalreporter.write_line(
            f"flux-schedkit conformance: interrupted after {len(_pending)} "
            "probes; no verdict, no certificate"
        )
        return
    label = f"{state.target} (policy {state.policy})"
    tr = terminalreporter
    tr.section("flux-schedkit conformance")
    width = getattr(tr, "_tw", None).fullwidth if getattr(tr, "_tw", None) else 100
    write_report(tr.write_line, state.results, label, width=min(width, 140))
    for line in state.written:
        tr.write_line(line)
    tr.write_line(f"wall time {state.wall:.1f} s")
