"""The ``flux-schedkit`` command line: dispatch, errors and ``version``."""

from __future__ import annotations

import importlib
import subprocess
import sys
from importlib import metadata

import pytest

from flux_schedkit import cli


def test_version_prints_both_versions(capsys):
    assert cli.main(["version"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("flux-schedkit ")
    assert lines[1].startswith("flux-python ")


def test_version_reports_installed_metadata(capsys):
    try:
        ours = metadata.version("flux-schedkit")
    except metadata.PackageNotFoundError:
        pytest.skip("flux-schedkit is not installed")
    cli.main(["version"])
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"flux-schedkit {ours}"
    flux_python = metadata.version("flux-python")
    assert out[1] == f"flux-python {flux_python} (pinned ==0.88.0)"


def test_unknown_subcommand_is_a_usage_error(capsys):
    assert cli.main(["no-such-command"]) == 2
    assert "invalid choice" in capsys.readouterr().err


def test_missing_subcommand_is_a_usage_error(capsys):
    assert cli.main([]) == 2
    assert "required" in capsys.readouterr().err


def test_help_exits_zero(capsys):
    assert cli.main(["--help"]) == 0
    assert "version" in capsys.readouterr().out


@pytest.mark.parametrize("name", sorted(cli.COMMANDS))
def test_command_modules_follow_the_protocol(name):
    module = importlib.import_module(cli.COMMANDS[name])
    assert (module.__doc__ or "").strip(), f"{name}: needs a docstring for --help"
    assert callable(module.add_arguments)
    assert callable(module.run)


def test_python_dash_m_entry_point():
    result = subprocess.run(
        [sys.executable, "-m", "flux_schedkit", "version"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("flux-schedkit ")
