"""Helpers for tests that run a real Flux instance (skipped without one).

A real ``flux`` is the first one on ``PATH``, or the one named by the
environment variable ``FLUX_SCHEDKIT_FLUX``.  The broker gets an
environment without ``PYTHONPATH``: the reference schedulers must load
through the files ``flux-schedkit site-config`` writes, as at a site.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from flux_schedkit import cli


def flux_command() -> str | None:
    """The ``flux`` to test with, or None."""
    named = os.environ.get("FLUX_SCHEDKIT_FLUX")
    if named:
        return named if os.access(named, os.X_OK) else None
    return shutil.which("flux")


def require_flux() -> str:
    """The ``flux`` command, or skip the test saying why."""
    flux = flux_command()
    if flux is None:
        pytest.skip(
            "no real flux: put flux-core 0.88's bin on PATH or set "
            "FLUX_SCHEDKIT_FLUX=/path/to/flux to run the tests against a broker"
        )
    result = subprocess.run(
        [flux, "version"], capture_output=True, text=True, timeout=60
    )
    if result.returncode != 0 or "0.88" not in result.stdout:
        pytest.skip(f"{flux} is not a flux-core 0.88: {result.stdout.strip()!r}")
    return flux


def site_folder(tmp_path: Path) -> Path:
    """Install the reference schedulers' site files into a fresh folder."""
    folder = tmp_path / "modprobe"
    assert cli.main(["site-config", str(folder)]) == 0
    return folder


def broker_env(site: Path, **extra: str) -> dict[str, str]:
    """The environment for ``flux start``: no PYTHONPATH, the site folder
    on the modprobe path (and its module files on the module path)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLUX_")}
    env.pop("PYTHONPATH", None)
    env["FLUX_MODPROBE_PATH_APPEND"] = str(site)
    env["FLUX_MODULE_PATH_PREPEND"] = str(site / "modules")
    env.update(extra)
    return env
