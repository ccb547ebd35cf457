"""Every library scenario passes against the minimal scheduler of
flux-core's guide *Writing a Python Scheduler* (but for R's times, which
its loop leaves unset), and the ones that can tell a faulty scheduler
apart do."""

from __future__ import annotations

import pytest

from conformance.scenarios.runner import library_paths, load_scenario, run_scenario

LIBRARY = library_paths()


def _by_name(name: str):
    return next(p for p in LIBRARY if p.stem == name)


def test_library_covers_the_rfc27_sequences():
    names = {p.stem for p in LIBRARY}
    assert names >= {
        "hello-running-jobs",
        "hello-partial-free",
        "partial-free-release-after",
        "cancel-pending-job",
        "limited-mode-withdrawal",
        "annotation-clearing",
        "priority-change-and-hold",
        "expiration-update",
        "scheduler-restart",
        "drain-undrain",
        "shrink",
        "deny-infeasible",
        "feasibility-check",
    }


#: The library scenarios whose jobs have a time limit: the guide's loop
#: answers with R as the pool makes it, expiration 0 (no limit enforced),
#: which the referee reports there and only there.
TIMED = {"expiration-update"}


def _passes_but_for_R_times(path, scheduler: str) -> None:
    result = run_scenario(path, scheduler)
    if path.stem in TIMED:
        assert {v.kind for v in result.violations} == {"R-times-wrong"}
        assert not result.failures, result.failures
    else:
        assert result.passed, "\n".join(result.reasons())


@pytest.mark.parametrize("path", LIBRARY, ids=lambda p: p.stem)
def test_library_scenario_passes_against_seed_minimal(path, seed):
    _passes_but_for_R_times(path, seed)


@pytest.mark.parametrize("path", LIBRARY, ids=lambda p: p.stem)
def test_library_scenario_passes_against_the_stamped_minimal(path, scheduler_path):
    result = run_scenario(path, scheduler_path("stamped_minimal.py"))
    assert result.passed, "\n".join(result.reasons())


@pytest.mark.parametrize("path", LIBRARY, ids=lambda p: p.stem)
def test_library_scenario_is_documented_and_names_no_scheduler(path):
    scenario = load_scenario(path)
    assert len(scenario.description) > 100
    # The library must work with whatever --scheduler the user names.
    assert scenario.scheduler_path is None


def test_annotation_clearing_passes_with_an_annotating_scheduler(scheduler_path):
    result = run_scenario(
        _by_name("annotation-clearing"),
        scheduler_path("annotating.py:AnnotatingScheduler"),
    )
    assert result.passed, "\n".join(result.reasons())


def test_annotation_clearing_catches_stale_annotations(scheduler_path):
    result = run_scenario(
        _by_name("annotation-clearing"),
        scheduler_path("annotating.py:StaleAnnotationsScheduler"),
    )
    assert not result.passed
    # The referee sees the stale key as the job starts; the scenario's own
    # expectation sees it at the end.
    assert [v.kind for v in result.violations] == ["stale-annotation"]
    assert len(result.failures) == 1
    assert "sched.reason_pending" in result.failures[0]
    assert result.failures[0].startswith("expect.jobs.later: annotations_absent")


def test_hello_running_jobs_catches_a_scheduler_that_ignores_hello(scheduler_path):
    result = run_scenario(
        _by_name("hello-running-jobs"), scheduler_path("forgetful_hello.py")
    )
    assert not result.passed
    assert [v.kind for v in result.violations] == ["R-overlap"]


@pytest.mark.parametrize(
    "scheduler, stamps",
    [
        ("seed_generator.py", False),
        ("annotating.py", False),
        ("expiring.py:ExpiringScheduler", True),
    ],
)
def test_library_passes_against_other_correct_schedulers(
    scheduler, stamps, scheduler_path
):
    for path in LIBRARY:
        if stamps:
            result = run_scenario(path, scheduler_path(scheduler))
            assert result.passed, f"{path.stem}: " + "\n".join(result.reasons())
        else:
            _passes_but_for_R_times(path, scheduler_path(scheduler))


@pytest.mark.parametrize("cls", ["PeriodicStats", "UnrefStats"])
def test_library_passes_against_a_scheduler_with_a_periodic_stats_timer(
    cls, scheduler_path
):
    # Its 60 s timer only logs: every run settles once the instance's own
    # work is done, as a real instance goes idle around such a module.
    for path in LIBRARY:
        result = run_scenario(path, scheduler_path(f"periodic.py:{cls}"))
        assert result.passed, f"{path.stem}: " + "\n".join(result.reasons())
        assert any(text.startswith("stats:") for *_, text in result.broker.logs)


# (scenario, faulty scheduler, violation kinds the referee must report)
FAULTS = [
    ("cancel-pending-job", "broken.py:IgnoresCancel", ["unanswered-cancel"]),
    ("limited-mode-withdrawal", "broken.py:IgnoresCancel", ["unanswered-cancel"]),
    ("priority-change-and-hold", "broken.py:IgnoresCancel", ["unanswered-cancel"]),
    ("drain-undrain", "broken.py:IgnoresDown", ["R-down-resources"]),
    ("hello-running-jobs", "forgetful_hello.py", ["R-overlap"]),
    ("scheduler-restart", "forgetful_hello.py", ["R-overlap"]),
    ("hello-partial-free", "no_partial.py", []),
]


@pytest.mark.parametrize(
    "name, scheduler, kinds", FAULTS, ids=[f"{n}-{s}" for n, s, _ in FAULTS]
)
def test_library_scenario_catches_the_fault_it_is_about(
    name, scheduler, kinds, scheduler_path
):
    result = run_scenario(_by_name(name), scheduler_path(scheduler))
    assert not result.passed
    assert [v.kind for v in result.violations] == kinds
