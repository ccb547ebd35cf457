"""``flux-schedkit selfcheck``: the substitution report and library runs."""

from __future__ import annotations

from pathlib import Path

from conformance.scenarios.runner import library_paths
from flux_schedkit import cli
from flux_schedkit.reference import REFERENCE_SCHEDULERS, reference_path

SCHEDULERS = Path(__file__).parent / "mock_broker" / "schedulers"


def test_a_correct_scheduler_passes_every_library_scenario(capsys):
    seed = str(SCHEDULERS / "stamped_minimal.py")
    assert cli.main(["selfcheck", "--scheduler", seed]) == 0
    out = capsys.readouterr().out
    assert "substitution fits" in out
    assert "kept from the wheel: flux.scheduler, flux.brokermod" in out
    n = len(library_paths())
    assert f"{n} of {n} scenario runs passed" in out
    assert out.count(" PASS") == n


def test_a_scheduler_that_ignores_cancels_fails_with_reasons(capsys):
    spec = f"{SCHEDULERS / 'broken.py'}:IgnoresCancel"
    assert cli.main(["selfcheck", "--scheduler", spec]) == 1
    out = capsys.readouterr().out
    assert " FAIL" in out
    assert "[unanswered-cancel]" in out
    assert "scenario runs passed" in out


def test_reference_path_names_the_valid_policies():
    try:
        reference_path("sjf")
    except KeyError as exc:
        assert all(name in str(exc) for name in REFERENCE_SCHEDULERS)
    else:
        raise AssertionError("an unknown policy must be refused")
