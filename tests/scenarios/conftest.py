"""Fixtures for the scenario tests: scheduler paths and scenario files."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

SCHEDULERS = Path(__file__).resolve().parents[1] / "mock_broker" / "schedulers"


@pytest.fixture
def scheduler_path():
    """Path of a test scheduler under tests/mock_broker/schedulers/."""

    def path(name: str = "seed_minimal.py") -> str:
        return str(SCHEDULERS / name)

    return path


@pytest.fixture
def seed(scheduler_path) -> str:
    """The minimal scheduler of flux-core's guide *Writing a Python Scheduler*."""
    return scheduler_path("seed_minimal.py")


@pytest.fixture
def write_scenario(tmp_path):
    """Write YAML text (dedented) to a file in tmp_path; return its path."""

    def write(text: str, name: str = "scenario.yaml") -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(text))
        return path

    return write
