"""Import hook that serves the substitute modules under their ``flux`` names."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import types


class _AliasLoader(importlib.abc.Loader):
    """Hand out an already-imported project module under a ``flux`` name.

    Aliasing, rather than loading the file a second time, keeps one class
    object per type: ``flux.future.Future`` *is*
    ``mock_broker.flux_substitute.future.Future``.
    """

    def __init__(self, target: str, search_path: list[str] | None):
        self._target = target
        self._search_path = search_path

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = importlib.import_module(self._target)
        if self._search_path is not None:
            module.__path__ = list(self._search_path)
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        """Nothing to run: the module was executed under its project name."""


class SubstituteFinder(importlib.abc.MetaPathFinder):
    """Meta path finder placed ahead of the wheel for the substituted names.

    ``flux`` gets the wheel's package directory as its search path, so every
    submodule that is not substituted loads from the wheel's own file.
    """

    def __init__(self, substitutes: dict[str, str], flux_dir: str):
        self._substitutes = dict(substitutes)
        self._search_paths: dict[str, list[str]] = {
            "flux": [flux_dir],
            "_flux": [],
            "flux.job": [],
        }

    def find_spec(self, fullname, path=None, target=None):
        target_module = self._substitutes.get(fullname)
        if target_module is None:
            return None
        search_path = self._search_paths.get(fullname)
        spec = importlib.machinery.ModuleSpec(
            fullname,
            _AliasLoader(target_module, search_path),
            is_package=search_path is not None,
        )
        if search_path is not None:
            spec.submodule_search_locations = list(search_path)
        return spec
