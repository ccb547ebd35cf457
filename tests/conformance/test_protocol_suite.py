"""The protocol suite, in process: every protocol clause is judged, catches
the gallery fault made for it, and fails nothing on correct schedulers.

Probes run through :func:`conformance.probes.execute` (no child process),
so these tests are quick and deterministic; the isolated runner is tested
by ``test_gallery.py``.
"""

from __future__ import annotations

import ast
import textwrap
from functools import cache
from pathlib import Path

import pytest
from gallery_modules import module_file

from conformance.clauses import load_clauses
from conformance.findings import FAIL, NOT_APPLICABLE, PASS
from conformance.probes import all_probes, execute, failures

ROOT = Path(__file__).resolve().parents[2]
GALLERY = Path(__file__).parent / "gallery"
SEED = ROOT / "tests" / "mock_broker" / "schedulers"

#: Judged by another colleague's probe (wall-time budget of callbacks).
NOT_OURS = {"callbacks.prompt"}

PROTOCOL = [
    c.id
    for c in load_clauses().values()
    if c.suite == "protocol" and c.id not in NOT_OURS
]

#: Correct schedulers that never annotate a job: what the annotation
#: clauses are about never happens, so no probe passes them.
NEVER_ANNOTATES = {"alloc.annotate-has-annotations", "annotations.t-estimate-absolute"}
UNEXERCISED = {
    "correct_fifo": NEVER_ANNOTATES,
    "seed_minimal": NEVER_ANNOTATES,
    "periodic_stats": NEVER_ANNOTATES,
    "periodic_unref": NEVER_ANNOTATES,
}


def check_judged(scheduler: str, judged: set, reasons: dict) -> None:
    """Every protocol clause passed somewhere, but those *scheduler* never
    exercises, which only ever get a "not exercised" reason."""
    unexercised = UNEXERCISED.get(scheduler, set())
    assert judged == set(PROTOCOL) - unexercised
    for clause in unexercised:
        assert reasons.get(clause), f"{clause}: no reason given"
        assert all(r.startswith("not exercised: ") for r in reasons[clause])


CORRECT = {
    "correct_fifo": str(GALLERY / "correct_fifo.py"),
    "seed_minimal": str(SEED / "seed_minimal.py"),
    # A stats line logged every 60 s, from a timer referenced or not: the
    # library scenarios must still settle.
    "periodic_stats": str(SEED / "periodic.py") + ":PeriodicStats",
    "periodic_unref": str(SEED / "periodic.py") + ":UnrefStats",
    "fifo": str(ROOT / "schedulers" / "fifo" / "schedkit-fifo.py"),
    "easy": str(ROOT / "schedulers" / "easy" / "schedkit-easy.py"),
    "conservative": str(
        ROOT / "schedulers" / "conservative" / "schedkit-conservative.py"
    ),
}


def gallery_module(clause: str) -> Path:
    """The gallery module that demonstrates *clause*."""
    return GALLERY / (clause.replace(".", "_").replace("-", "_") + ".py")


def declared_clause(path: Path) -> str | None:
    for node in ast.parse(path.read_text()).body:
        if (
            isinstance(node, ast.Assign)
            and getattr(node.targets[0], "id", "") == "CLAUSE"
        ):
            return ast.literal_eval(node.value)
    return None


@cache
def suite_probes() -> tuple[str, ...]:
    """The probes of the protocol suite: ours and the library scenarios."""
    return tuple(
        sorted(
            name
            for name, p in all_probes().items()
            if name.startswith("scenario:") or set(p.covers) & set(PROTOCOL)
        )
    )


def probes_judging(clause: str) -> list[str]:
    """The probes that cover *clause*; for a clause only the referee judges,
    every protocol-suite probe (the first that catches the fault will do)."""
    covering = [n for n in suite_probes() if clause in all_probes()[n].covers]
    return covering or list(suite_probes())


def test_every_protocol_clause_is_judged():
    clauses = load_clauses()
    covered = {c for n in suite_probes() for c in all_probes()[n].covers}
    for clause in PROTOCOL:
        assert clause in covered or clauses[clause].referee, clause


def test_protocol_probes_are_registered_and_documented():
    ours = [n for n in suite_probes() if n.startswith("protocol:")]
    assert len(ours) >= 13
    for name in ours:
        p = all_probes()[name]
        assert p.covers and set(p.covers) <= set(PROTOCOL), name
        assert p.run.__doc__, f"{name} has no docstring"
        assert p.budget <= 30.0 and not p.policies, name


def test_every_protocol_clause_has_its_gallery_module():
    for clause in PROTOCOL:
        path = gallery_module(clause)
        assert path.exists(), f"no gallery module for {clause}"
        assert declared_clause(path) == clause, path.name


@pytest.mark.parametrize("clause", PROTOCOL)
def test_the_gallery_fault_fails_its_clause(clause):
    target = str(gallery_module(clause))
    tried = []
    for name in probes_judging(clause):
        findings, _ = execute(name, target)
        tried.append(name)
        broken = failures(findings).get(clause)
        if broken:
            evidence = broken[0].evidence
            assert evidence is not None and evidence.text and evidence.probe == name
            return
    pytest.fail(f"{clause} was not caught by {tried}")


#: What a scheduler of :data:`CORRECT` fails on purpose: flux-core's guide's
#: minimal scheduler answers with R as flux-python's pool makes it, with no
#: expiration, so flux-core 0.88 enforces no time limit on its jobs (a job
#: submitted with ``-t 2s`` ran its 6 s in a real broker).
KNOWN_FAULTS = {"seed_minimal": {"alloc.R-times"}}


@pytest.mark.parametrize("scheduler", sorted(CORRECT))
def test_correct_schedulers_fail_no_protocol_clause(scheduler):
    target = CORRECT[scheduler]
    known = KNOWN_FAULTS.get(scheduler, set())
    problems, failed = [], set()
    judged = set()
    reasons: dict = {}
    for name in suite_probes():
        findings, _ = execute(name, target)
        for f in findings:
            if f.clause not in PROTOCOL:
                continue
            if f.verdict == FAIL:
                failed.add(f.clause)
                if f.clause not in known:
                    problems.append(f"{name}: {f.clause}: {f.evidence.text}")
            elif f.verdict == PASS:
                judged.add(f.clause)
            else:
                assert f.verdict == NOT_APPLICABLE
                if f.evidence is not None:
                    reasons.setdefault(f.clause, []).append(f.evidence.text)
    assert not problems, "\n".join(problems)
    assert failed == known
    check_judged(scheduler, judged | known, reasons)


def _variant(tmp_path, name: str, body: str) -> str:
    """A module file: the gallery's correct FIFO with *body* in its class."""
    path = tmp_path / f"{name}.py"
    path.write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(GALLERY)!r})\n"
        "from _base import GalleryFifo\n\n\n"
        "class Variant(GalleryFifo):\n"
        + textwrap.indent(textwrap.dedent(body), "    ")
        + "\n\ndef mod_main(h, *args):\n    Variant(h, *args).run()\n"
    )
    return str(path)


def test_feasibility_is_not_applicable_without_the_service(tmp_path):
    target = _variant(
        tmp_path,
        "no_feasibility",
        """
        def _service_register(self, name):
            if name != "feasibility":
                super()._service_register(name)
        """,
    )
    findings, _ = execute("protocol:feasibility", target)
    (finding,) = [f for f in findings if f.clause == "feasibility.agrees"]
    assert finding.verdict == NOT_APPLICABLE
    assert "no feasibility service" in finding.evidence.text
    # the constraints probe judges the alloc half alone, and it passes
    findings, _ = execute("protocol:constraints", target)
    assert not failures(findings)
    assert [
        f.verdict for f in findings if f.clause == "alloc.constraints-honoured"
    ] == [PASS]


@pytest.mark.parametrize("answer", ["accept", "enosys", "refuse"])
def test_expiration_may_be_accepted_or_refused(answer):
    target = str(SEED / "expiring.py") + ":ExpiringScheduler"
    findings, _ = execute("protocol:expiration", target, [f"expiration={answer}"])
    assert not failures(findings)


def test_an_accepted_expiration_the_plan_ignores_fails(tmp_path):
    target = _variant(
        tmp_path,
        "stale_estimates",
        """
        def forecast(self):
            import time
            for job in self._queue:
                update = {"t_estimate": time.time() + 250.0}
                if job._last_annotation is None:
                    job._last_annotation = update
                    job.request.annotate({"sched": update})
        """,
    )
    findings, _ = execute("protocol:expiration", target)
    (failed,) = failures(findings)["expiration.update"]
    assert "still estimates the next job" in failed.evidence.text


def test_refusing_the_queue_depth_argument_fails(tmp_path):
    target = _variant(
        tmp_path,
        "no_depth",
        """
        def __init__(self, h, *args):
            if any(a.startswith("queue-depth=") for a in args):
                raise ValueError("queue-depth is not supported")
            super().__init__(h, *args)
        """,
    )
    findings, _ = execute("protocol:queue-depth", target)
    texts = [f.evidence.text for f in failures(findings)["ready.queue-depth"]]
    assert len(texts) == 2
    assert "queue-depth is not supported" in texts[0]


def test_a_hello_that_does_not_stream_fails(tmp_path):
    target = _variant(
        tmp_path,
        "hello_once",
        """
        def _sched_hello(self):
            f = self.handle.rpc("job-manager.sched-hello", {"partial-ok": True})
            try:
                f.get()
            except OSError as exc:
                self.log.error(f"hello: {exc}")
        """,
    )
    findings, _ = execute("protocol:hello", target)
    (failed,) = failures(findings)["hello.partial-ok"]
    assert "does not stream" in failed.evidence.text


def test_a_cancel_that_frees_a_running_job_fails(tmp_path):
    target = _variant(
        tmp_path,
        "cancel_frees",
        """
        def cancel(self, jobid):
            if any(j.jobid == jobid for j in self._queue):
                super().cancel(jobid)
            else:
                self.resources.free(jobid, None, final=True)
        """,
    )
    findings, _ = execute("protocol:cancel-unknown", target)
    texts = [f.evidence.text for f in failures(findings)["cancel.unknown-ignored"]]
    assert len(texts) == 1 and "lost its resources to the cancel" in texts[0]
    assert "alloc.R-disjoint" in failures(findings)


def test_a_cancel_that_crashes_on_an_unknown_id_fails(tmp_path):
    target = _variant(
        tmp_path,
        "cancel_crashes",
        """
        def cancel(self, jobid):
            (job,) = [j for j in self._queue if j.jobid == jobid]
            super().cancel(job.jobid)
        """,
    )
    findings, _ = execute("protocol:cancel-unknown", target)
    (failed,) = failures(findings)["cancel.unknown-ignored"]
    assert failed.evidence.text.startswith(
        "after sched.cancel for an unknown job id, it exited"
    )


def test_evidence_points_at_the_offending_message():
    findings, _ = execute("protocol:hello", str(gallery_module("hello.partial-ok")))
    (failed,) = failures(findings)["hello.partial-ok"]
    marked = [ln for ln in failed.evidence.excerpt.splitlines() if ln.startswith(">>")]
    assert len(marked) == 1
    assert 'job-manager.sched-hello {"partial-ok":false}' in marked[0]


def test_probes_are_deterministic():
    target = str(gallery_module("alloc.R-matches-request"))
    runs = [execute("protocol:request-shapes", target)[0] for _ in range(2)]
    assert [f.to_dict() for f in runs[0]] == [f.to_dict() for f in runs[1]]


def test_a_mod_main_that_is_not_a_function_fails_the_entry_point(tmp_path):
    # flux-core finds mod_main by name and only fails when it calls it.
    module = tmp_path / "not_callable.py"
    module.write_text("mod_main = 42\n")
    findings, _ = execute("protocol:entry-point", str(module))
    [finding] = [f for f in findings if f.clause == "load.entry-point"]
    assert finding.verdict == FAIL
    assert "mod_main is not callable (a int)" in finding.evidence.text


# Faults found by trying plausible schedulers against the kit: each passed
# every clause before the scenario that now catches it.

LOWERED_KEEPS_ITS_PLACE = """
import heapq

from _base import GalleryFifo


class SiftsUpOnly(GalleryFifo):
    def prioritize(self, jobs):
        new = dict(jobs)
        for i, job in enumerate(self._queue):
            if job.jobid in new:
                job.priority = new[job.jobid]
                heapq._siftdown(self._queue, 0, i)  # right for a raise only


def mod_main(h, *args):
    SiftsUpOnly(h, *args).run()
"""

TIES_BY_ARRIVAL = """
import heapq
import itertools

from _base import GalleryFifo
from flux.scheduler import PendingJob

ARRIVALS = itertools.count()


class Arrived(PendingJob):
    __slots__ = ("seq",)

    def __lt__(self, other):
        if self.priority != other.priority:
            return self.priority > other.priority
        return self.seq < other.seq  # the request's arrival, not submission


class TiesByArrival(GalleryFifo):
    def alloc(self, request, jobid, priority, userid, t_submit, jobspec):
        rr = self.resources.parse_resource_request(jobspec)
        job = Arrived(jobid, priority, t_submit, request, rr)
        job.seq = next(ARRIVALS)
        heapq.heappush(self._queue, job)


def mod_main(h, *args):
    TiesByArrival(h, *args).run()
"""

DENIES_WHEN_IDLE = """
from _base import GalleryFifo


class DeniesWhenIdle(GalleryFifo):
    def wait(self, job):
        # "Nothing runs and it does not fit: it never will" (drained and
        # down ranks come back).
        if not self.resources.copy_allocated().ranks:
            job.request.deny("needs more than the machine has")
            self._queue.remove(job)


def mod_main(h, *args):
    DeniesWhenIdle(h, *args).run()
"""


@pytest.mark.parametrize(
    "body, scenario, clause, unmet",
    [
        (
            LOWERED_KEEPS_ITS_PLACE,
            "priority-lowered-and-requeued",
            "priority.takes-effect",
            "expect.jobs.a: started_at: is 100, expected 120",
        ),
        (
            TIES_BY_ARRIVAL,
            "priority-lowered-and-requeued",
            "priority.takes-effect",
            "expect.jobs.b: started_at: is 110, expected 100",
        ),
        (
            DENIES_WHEN_IDLE,
            "drain-while-idle",
            "resources.drain-undrain",
            "expect.jobs.both: result: is denied, expected completed",
        ),
    ],
    ids=["lowered-keeps-its-place", "ties-by-arrival", "denies-when-idle"],
)
def test_scenarios_catch_faults_the_other_clauses_let_through(
    tmp_path, body, scenario, clause, unmet
):
    target = module_file(tmp_path, "fault", body)
    findings, _ = execute(f"scenario:{scenario}", target)
    failed = failures(findings)
    assert set(failed) == {clause}
    assert unmet in failed[clause][0].evidence.text


def test_a_scenario_failure_points_at_the_first_unmet_expectation():
    # The gallery module forgets the jobs hello reported: it starts the
    # queued job at once, on their nodes.  The evidence is that moment
    # (t=0: the SUCCESS, the referee's overlap, the unmet checkpoint), not
    # the end of the run at t=100.
    findings, _ = execute(
        "scenario:hello-running-jobs", str(GALLERY / "hello_running_jobs.py")
    )
    (finding,) = [
        f for f in findings if f.verdict == FAIL and f.clause == "hello.running-jobs"
    ]
    evidence = finding.evidence
    assert evidence.time == 0.0
    marked = [ln for ln in evidence.excerpt.splitlines() if ln.startswith(">>")]
    assert len(marked) == 1
    assert (
        "UNMET expect.at[0] (t=0) two-nodes: state: is RUN, expected SCHED"
        in (marked[0])
    )
    before = evidence.excerpt.split(marked[0])[0]
    assert "sched.alloc (response)" in before and "R-overlap" in before
