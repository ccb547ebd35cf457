"""The robustness and scale probes, in process: ``robust.hostile-jobspecs``,
``robust.random-sequences`` and ``scale.completes`` catch the gallery
fault made for each and judge the correct schedulers.

Probes run through :func:`conformance.probes.execute` (no child process).
Randomized probes are seeded; the scale workload is cut down through the
module constants, so every test here is quick and deterministic.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest
from gallery_modules import module_file

from conformance.findings import FAIL
from conformance.probes import all_probes, execute, failures, scale
from conformance.probes import hostile_jobspecs as hostile
from conformance.probes import random_sequences as sequences
from conformance.probes.sequence_checks import FLAKY

ROOT = Path(__file__).resolve().parents[2]
GALLERY = Path(__file__).parent / "gallery"

HOSTILE = "robust.hostile-jobspecs"
RANDOM = "robust.random-sequences"
SCALE = "scale.completes"

SEED_MINIMAL = ROOT / "tests" / "mock_broker" / "schedulers" / "seed_minimal.py"

CORRECT = {
    "correct_fifo": str(GALLERY / "correct_fifo.py"),
    "fifo": str(ROOT / "schedulers" / "fifo" / "schedkit-fifo.py"),
    "easy": str(ROOT / "schedulers" / "easy" / "schedkit-easy.py"),
    "conservative": str(
        ROOT / "schedulers" / "conservative" / "schedkit-conservative.py"
    ),
}

#: Hostile cases that flux-python 0.88's own jobspec parser accepts
#: (``ResourceRequest.from_jobspec``: the version and tasks are not read, a
#: count that is not an int, dict or string counts as 1 and a missing one
#: as 1, unknown types are skipped, the duration goes through ``float()``).
#: Every scheduler that leaves parsing to it allocates these; the
#: reference schedulers and the gallery base check jobspecs first.
UPSTREAM_LENIENT = frozenset(
    {
        "no-tasks",
        "no-version",
        "no-count",
        "version-string",
        "tasks-dict",
        "count-float",
        "count-null",
        "count-bool",
        "count-list",
        "unknown-type-in-slot",
        "unknown-type-above-node",
        "duration-negative",
        "duration-numeric-string",
        "duration-bool",
    }
)


def _failed(findings, clause):
    return [f for f in findings if f.clause == clause and f.verdict == FAIL]


def _random_sequences_fail_once(module, seed: int, examples: int) -> str:
    """Run the random sequences on *module*: they must fail it once, and
    this is the evidence."""
    findings, _ = execute(RANDOM, module, seed=seed, examples=examples)
    failed = _failed(findings, RANDOM)
    assert len(failed) == 1, failures(findings)
    return failed[0].evidence.text


# -- registration -------------------------------------------------------------------


def test_probes_are_registered_with_generous_budgets():
    probes = all_probes()
    for name in (HOSTILE, RANDOM, SCALE):
        assert probes[name].covers == (name,)
    assert probes[SCALE].budget >= 300 and probes[SCALE].cost >= 100
    assert probes[RANDOM].budget > sequences.SHRINK_SECONDS


# -- robust.hostile-jobspecs -----------------------------------------------------------


def test_hostile_cases_are_distinct_and_carried_by_a_broker():
    names = [c.name for c in hostile.CASES]
    assert len(names) == len(set(names))
    groups = {c.group for c in hostile.CASES}
    assert groups >= {
        "not-a-dict",
        "missing-key",
        "wrong-type",
        "count",
        "range",
        "nesting",
        "unknown-type",
        "duration",
    }
    for case in hostile.cases():
        json.dumps(case.jobspec, allow_nan=False)  # what a message carries
        assert case.summary().startswith(case.name)


def test_a_scheduler_that_trusts_the_jobspec_crashes_and_fails():
    findings, stats = execute(HOSTILE, str(GALLERY / "robust_hostile_jobspecs.py"))
    failed = _failed(findings, HOSTILE)
    crashes = [f for f in failed if "module exited while handling" in f.evidence.text]
    assert crashes, [f.evidence.text for f in failed]
    first = crashes[0].evidence
    assert "not-a-dict-string" in first.text
    assert "it logged: alloc callback raised" in first.text
    assert "module exited" in first.excerpt and first.traceback
    assert _failed(findings, "robust.no-crash")
    # Reloaded after each crash: every case still got a verdict.
    assert stats["hostile_cases"] == len(hostile.CASES)
    assert stats["module_reloads"] >= 10


def test_a_scheduler_that_drops_what_it_cannot_parse_fails(tmp_path):
    module = tmp_path / "drops_unparsable.py"
    module.write_text(
        textwrap.dedent(
            f"""
            import sys
            sys.path.insert(0, {str(GALLERY)!r})
            from _base import GalleryFifo

            class Drops(GalleryFifo):
                def alloc(self, request, jobid, priority, userid, t_submit, jobspec):
                    try:
                        self.resources.parse_resource_request(jobspec)
                    except Exception:
                        return  # neither queued nor denied
                    super().alloc(request, jobid, priority, userid, t_submit, jobspec)

            def mod_main(h, *args):
                Drops(h, *args).run()
            """
        )
    )
    findings, stats = execute(HOSTILE, str(module))
    texts = [f.evidence.text for f in _failed(findings, HOSTILE)]
    assert any("left pending" in t and "not-a-dict-string" in t for t in texts)
    assert stats["hostile_outcomes"]["no-resources"] == "left pending"
    assert not _failed(findings, "robust.no-crash")


@pytest.mark.parametrize("name", sorted(CORRECT))
def test_correct_schedulers_deny_every_hostile_jobspec(name):
    """They check jobspecs themselves (flux_sched_base.jobspec): every case
    is denied with a note, nothing crashes, the normal jobs complete."""
    findings, stats = execute(HOSTILE, CORRECT[name])
    outcomes = stats["hostile_outcomes"]
    assert len(outcomes) == len(hostile.CASES)
    assert {o for o in outcomes.values()} == {"denied"}
    assert not failures(findings)


def test_the_upstream_parser_alone_allocates_the_lenient_cases():
    """The minimal scheduler of flux-core's guide *Writing a Python
    Scheduler* leaves parsing to flux-python: the kit fails it on exactly
    the cases that parser accepts."""
    findings, stats = execute(HOSTILE, str(SEED_MINIMAL))
    allocated = {n for n, o in stats["hostile_outcomes"].items() if o == "allocated"}
    assert allocated == UPSTREAM_LENIENT
    texts = [f.evidence.text for f in _failed(findings, HOSTILE)]
    assert any("no-tasks" in t for t in texts)
    assert not _failed(findings, "robust.no-crash")


# -- robust.random-sequences ----------------------------------------------------------------


@pytest.fixture
def quick_shrink(monkeypatch):
    """Shrinking polishes evidence only; keep it short in tests."""
    monkeypatch.setattr(sequences, "SHRINK_SECONDS", 3.0)


def test_a_scheduler_that_answers_a_replay_otherwise_is_told_so(tmp_path, quick_shrink):
    # Its second load in the process crashes at the first pass; hypothesis
    # replays that example on a later load, which works: a Flaky error
    # whose own words ("your data generation") speak to a test's author.
    flag = f"_schedkit_test_loads_{id(tmp_path)}"
    module = module_file(
        tmp_path,
        "second_load",
        f"""
        import sys
        from seed_minimal import SimpleScheduler

        class Second(SimpleScheduler):
            def schedule(self):
                if getattr(sys, {flag!r}) == 2:
                    raise RuntimeError("the second load in this process")
                super().schedule()

        def mod_main(h, *args):
            setattr(sys, {flag!r}, getattr(sys, {flag!r}, 0) + 1)
            Second(h, *args).run()
        """,
    )
    try:
        findings, _ = execute(RANDOM, module, seed=0, examples=10)
    finally:
        delattr(sys, flag)
    [failed] = _failed(findings, RANDOM)
    first = failed.evidence.text.splitlines()[0]
    assert first.endswith(FLAKY), first
    assert "the second load in this process" in first


def test_a_scheduler_that_forgets_fresh_requests_after_restart_fails(quick_shrink):
    findings, stats = execute(
        RANDOM, str(GALLERY / "robust_random_sequences.py"), seed=0, examples=10
    )
    failed = _failed(findings, RANDOM)
    assert len(failed) == 1, failures(findings)
    evidence = failed[0].evidence
    # Where the forgotten job fits the idle machine with its drains, the
    # idle check says so first; else the end checks find it still in SCHED
    # (which sequence shrinking ends on depends on its wall-time bound).
    assert (
        "waits while nothing runs and its request fits" in evidence.text
        or "still in SCHED" in evidence.text
    )
    assert "request held by the scheduler" in evidence.text
    steps = evidence.text.split("minimal sequence:\n", 1)[1].splitlines()
    assert steps[0] == "state = SchedulerMachine()"
    assert any("= state.load(" in s for s in steps)
    assert "state.restart()" in steps and steps[-1] == "state.teardown()"
    assert evidence.excerpt  # from the replay of the minimal sequence
    printed = [s for s in steps if not s.startswith(" ")]  # not continuations
    assert stats["examples"] >= 1 and stats["failing_steps"] == len(printed)
    # Only the random-sequence clause: the fault breaks no protocol rule.
    assert set(failures(findings)) == {RANDOM}


def test_a_scheduler_that_leaks_partial_frees_fails(tmp_path, quick_shrink):
    module = module_file(
        tmp_path,
        "leaks_partial_frees",
        """
        from _base import GalleryFifo

        class Leaks(GalleryFifo):
            def free(self, jobid, R, final=False):
                if final:  # only the last ranks come back
                    super().free(jobid, R, final=False)

        def mod_main(h, *args):
            Leaks(h, *args).run()
        """,
    )
    findings, _ = execute(RANDOM, module, seed=1, examples=10)
    failed = _failed(findings, RANDOM)
    assert len(failed) == 1, failures(findings)
    text = failed[0].evidence.text
    assert "still counts as allocated" in text or "still in SCHED" in text, text
    assert "release=([" in text  # a job released in partial frees
    assert set(failures(findings)) == {RANDOM}


def test_a_scheduler_that_drops_a_free_during_its_pass_fails(tmp_path, quick_shrink):
    # flux-core's generator example (a start per step), but a free that
    # comes while a pass is under way is dropped ("the pass will see it").
    # Every other rule acts between passes: only a job ending part way
    # through one shows it.
    module = module_file(
        tmp_path,
        "drops_frees_mid_pass",
        """
        import time

        from seed_generator import GeneratorScheduler

        class DropsFreesMidPass(GeneratorScheduler):
            in_pass = False

            def schedule(self):
                self.in_pass = True
                pool, alloc = self.resources, self.resources.alloc

                def stamped(jobid, request):  # R's times, as sched-fifo's
                    R = alloc(jobid, request)
                    R.set_starttime(time.time())
                    if request.duration > 0:
                        R.set_expiration(time.time() + request.duration)
                    return R

                pool.alloc = stamped
                try:
                    yield from super().schedule()
                finally:
                    self.in_pass = False
                    del pool.alloc

            def free(self, jobid, R, final=False):
                if not self.in_pass:
                    super().free(jobid, R, final)

        def mod_main(h, *args):
            DropsFreesMidPass(h, *args).run()
        """,
    )
    text = _random_sequences_fail_once(module, seed=1, examples=40)
    assert "state.end_during_pass(" in text


def test_a_scheduler_that_lets_an_event_during_its_pass_go_fails(tmp_path):
    # A generator FIFO that annotates the waiting jobs after its starts and
    # does not let an event cut a pass short: one that comes during the
    # annotations gets no pass of its own.  Caught only while the machine
    # sits idle with the drains left as they were: bringing every rank
    # back at the end sets off a pass that hides it.
    module = module_file(
        tmp_path,
        "lets_events_go",
        """
        from _base import GalleryFifo


        class LetsEventsGo(GalleryFifo):
            def schedule(self):
                GalleryFifo.schedule(self)  # the correct FIFO's starts
                for ahead, job in enumerate(sorted(self._queue)):
                    job.request.annotate({"sched": {"jobs_ahead": ahead}})
                    yield

            def start_schedule(self):
                if self._sched_generator is None:  # else the event is lost
                    super().start_schedule()


        def mod_main(h, *args):
            LetsEventsGo(h, *args).run()
        """,
    )
    text = _random_sequences_fail_once(module, seed=0, examples=20)
    assert "waits while nothing runs and its request fits" in text


@pytest.mark.parametrize("name", sorted(CORRECT))
def test_correct_schedulers_pass_random_sequences(name):
    findings, stats = execute(RANDOM, CORRECT[name], seed=3, examples=6)
    assert not failures(findings), failures(findings)
    assert stats["examples"] >= 6 and stats["steps"] > 0
    assert stats["job_manager"]["alloc_sent"] > 0


def test_random_sequences_are_seeded():
    def run():
        _, stats = execute(RANDOM, CORRECT["correct_fifo"], seed=7, examples=4)
        return stats

    assert run() == run()


# -- scale.completes ------------------------------------------------------------------------


def test_workload_is_seeded_and_fits_the_machine():
    jobs = scale.workload(5, 400)
    assert jobs == scale.workload(5, 400) and jobs != scale.workload(6, 400)
    arrivals = [t for t, _, _ in jobs]
    assert arrivals == sorted(arrivals) and arrivals[0] > 0
    for _, spec, runtime in jobs:
        node = spec["resources"][0]
        if node["type"] == "node":
            assert node["count"] <= scale.NODES
        assert runtime > 0


@pytest.fixture
def small_scale(monkeypatch):
    """A workload of a few hundred jobs with the same rate budget."""
    monkeypatch.setattr(scale, "JOBS", 300)


@pytest.mark.parametrize("name", sorted(CORRECT))
def test_correct_schedulers_complete_the_workload(name, small_scale):
    findings, stats = execute(SCALE, CORRECT[name], seed=2)
    assert not failures(findings), failures(findings)
    assert stats["jobs"] == stats["jobs_done"] == 300
    iterations = stats["reactor_iterations"]
    assert iterations["count"] > 0
    # Wall times: a heavy tail can put the mean above the p95.
    assert 0 < iterations["mean"] <= iterations["max"]
    assert iterations["p95"] <= iterations["max"]
    assert stats["jobs_per_wall_second"] > 0 and stats["jobs_per_cpu_second"] > 0
    assert stats["scheduler_stats"]["sched_passes"] > 0
    assert 0 < stats["core_utilization"] < 1


def test_a_scheduler_that_rescans_every_job_it_has_seen_is_too_slow(monkeypatch):
    # 1,000 jobs: the rescans would take some 400 CPU seconds, twenty times
    # the budget; the probe stops it after EARLY_CPU seconds.
    monkeypatch.setattr(scale, "JOBS", 1000)
    findings, stats = execute(SCALE, str(GALLERY / "scale_completes.py"), seed=2)
    failed = _failed(findings, SCALE)
    assert len(failed) == 1, failures(findings)
    assert failed[0].evidence.text.startswith("stopped early")
    assert stats["jobs_done"] < 1000
    assert set(failures(findings)) == {SCALE}


def test_scale_run_stops_near_the_runners_wall_budget():
    progress = scale._Progress(100, budget=1e6, probe_wall=1e-9)
    assert progress.check(arrived=1, done=0).startswith("stopped near")
    assert scale._Progress(100, budget=1e6, probe_wall=None).check(1, 0) is None


def test_core_utilization_counts_only_what_the_machine_has():
    """The scale statistic reads the scheduler's R: cores of the machine
    are counted, and an R naming billions of ranks or no readable ranks
    counts nothing instead of being expanded or crashing the probe."""

    def R(*entries):
        return {"version": 1, "execution": {"R_lite": list(entries)}}

    assert scale._cores_held(R({"rank": "0-1", "children": {"core": "0-3"}})) == 8
    assert (
        scale._cores_held(R({"rank": "0-99999999999", "children": {"core": "0"}})) == 0
    )
    assert (
        scale._cores_held(R({"rank": "0", "children": {"core": "0-2000000000"}})) == 0
    )
    assert scale._cores_held(R({"rank": "0", "children": {"core": "a-b"}})) == 0
    assert scale._cores_held(R(7)) == 0
    assert scale._cores_held({"execution": "x"}) == 0


def test_reactor_iteration_times_are_kept_in_bounded_memory(monkeypatch):
    # A module whose pass never ends but yields iterates its reactor
    # millions of times: the scale probe's record of iteration times must
    # not grow with them (a list of every time once failed such a module
    # on robust.memory, for the kit's own list).  Count, mean and maximum
    # stay exact; the 95th percentile is within 1%.
    import tracemalloc

    walls = [(i % 1000 + 1) * 1e-6 for i in range(200_000)]  # 1 us .. 1 ms
    ticks = iter(t for wall in walls for t in (0.0, wall))
    monkeypatch.setattr(scale.time, "perf_counter", lambda: next(ticks))
    reactor = type("Reactor", (), {"iterate": lambda self: None})()
    timer = scale._IterationTimer(type("Link", (), {"reactor": reactor})())
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in walls:
            reactor.iterate()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 200_000, f"{grown} bytes for {len(walls)} iterations"
    summary = timer.summary()
    assert summary["count"] == len(walls)
    assert summary["max"] == max(walls)
    assert abs(summary["mean"] - sum(walls) / len(walls)) < 1e-12
    exact = sorted(walls)[int(0.95 * len(walls)) - 1]
    assert exact <= summary["p95"] <= exact * 1.01
