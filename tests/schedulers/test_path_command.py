"""``flux-schedkit path NAME`` locates the reference scheduler modules."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import POLICIES

from flux_schedkit import cli


@pytest.mark.parametrize("name", POLICIES)
def test_path_prints_the_absolute_module_path(name, capsys):
    assert cli.main(["path", name]) == 0
    out = capsys.readouterr().out.strip()
    path = Path(out)
    assert path.is_absolute() and path.is_file()
    assert path.name == f"schedkit-{name}.py"
    assert "def mod_main(" in path.read_text()


def test_unknown_name_is_a_usage_error_naming_the_valid_ones(capsys):
    assert cli.main(["path", "backfill"]) == 2
    err = capsys.readouterr().err
    assert "backfill" in err
    for name in POLICIES:
        assert name in err


def test_path_works_as_a_command():
    result = subprocess.run(
        [sys.executable, "-m", "flux_schedkit", "path", "conservative"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.strip().endswith("schedkit-conservative.py")
