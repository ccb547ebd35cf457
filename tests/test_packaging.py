"""The packaging metadata agrees with the tree and with the other pins."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def pyproject() -> dict:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)


def _package_dirs(pyproject: dict) -> dict[str, Path]:
    """Map every package listed in pyproject.toml to its folder."""
    setuptools = pyproject["tool"]["setuptools"]
    package_dir = setuptools["package-dir"]
    dirs = {}
    for package in setuptools["packages"]:
        top, *rest = package.split(".")
        dirs[package] = ROOT / package_dir[top] / Path(*rest)
    return dirs


SCHEDULERS = "flux_schedkit_schedulers"


def test_every_listed_package_has_its_folder(pyproject):
    for package, folder in _package_dirs(pyproject).items():
        if package.startswith(SCHEDULERS + "."):
            # Scheduler folders hold module files loaded by path: no init.
            assert folder.is_dir(), package
        else:
            assert (folder / "__init__.py").is_file(), package


def test_every_subpackage_in_the_tree_is_listed(pyproject):
    setuptools = pyproject["tool"]["setuptools"]
    listed = set(setuptools["packages"])
    for top, folder in setuptools["package-dir"].items():
        for init in sorted((ROOT / folder).rglob("__init__.py")):
            relative = init.parent.relative_to(ROOT / folder)
            package = ".".join((top, *relative.parts))
            assert package in listed, (
                f"{init.parent.relative_to(ROOT)} is a package but "
                f"{package!r} is missing from [tool.setuptools] packages"
            )


def test_every_scheduler_folder_ships(pyproject):
    listed = set(pyproject["tool"]["setuptools"]["packages"])
    for folder in sorted((ROOT / "schedulers").iterdir()):
        if folder.is_dir() and not folder.name.startswith(("_", ".")):
            assert f"{SCHEDULERS}.{folder.name}" in listed, folder.name


def test_flux_python_pin_matches_the_substitute(pyproject):
    from mock_broker.flux_substitute import PINNED_FLUX_PYTHON

    pins = [
        dep
        for dep in pyproject["project"]["dependencies"]
        if dep.startswith("flux-python")
    ]
    assert pins == [f"flux-python=={PINNED_FLUX_PYTHON}"]


def test_ci_runs_the_readme_test_command():
    script = (ROOT / ".ci" / "run").read_text()
    match = re.search(r"^TEST_COMMAND='([^']*)'$", script, re.MULTILINE)
    assert match, ".ci/run must define TEST_COMMAND='...'"
    readme_lines = {
        line.strip() for line in (ROOT / "README.md").read_text().splitlines()
    }
    assert match.group(1) in readme_lines
