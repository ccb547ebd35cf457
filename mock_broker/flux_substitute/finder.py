"""Import hook that serves the substitute modules under their ``flux`` names."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import os
import types


class _AliasLoader(importlib.abc.Loader):
    """Hand out an already-imported project module under a ``flux`` name.

    Aliasing, rather than loading the file a second time, keeps one class
    object per type: ``flux.future.Future`` *is*
    ``mock_broker.flux_substitute.future.Future``.
    """

    def __init__(
        self, target: str, search_path: list[str] | None, children: list[str] = ()
    ):
        self._target = target
        self._search_path = search_path
        self._children = list(children)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = importlib.import_module(self._target)
        if self._search_path is not None:
            module.__path__ = list(self._search_path)
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        """Load the substituted submodules whose names the package already
        binds to something else, keeping the package's binding.

        The module itself was executed under its project name.  flux-python's
        ``flux/job/__init__.py`` imports its ``flux.job.JobID`` submodule
        and then binds the name ``JobID`` to the class; here the submodule
        is loaded now for the same reason: loaded later, the import system
        would set ``flux.job.JobID`` to the module, and every ``from
        flux.job import JobID`` after that would get the module.
        """
        for child in self._children:
            name = child.rpartition(".")[2]
            if name not in module.__dict__:
                continue
            bound = module.__dict__[name]
            importlib.import_module(child)
            setattr(module, name, bound)


class SubstituteFinder(importlib.abc.MetaPathFinder):
    """Meta path finder placed ahead of the wheel for the substituted names.

    ``flux`` (and ``flux.job``) get the wheel's package directory as their
    search path, so every submodule that is not substituted loads from the
    wheel's own file.
    """

    def __init__(self, substitutes: dict[str, str], flux_dir: str):
        self._substitutes = dict(substitutes)
        # flux.job's init is replaced, its submodules are the wheel's.
        self._search_paths: dict[str, list[str]] = {
            "flux": [flux_dir],
            "_flux": [],
            "flux.job": [os.path.join(flux_dir, "job")],
        }

    def find_spec(self, fullname, path=None, target=None):
        target_module = self._substitutes.get(fullname)
        if target_module is None:
            return None
        search_path = self._search_paths.get(fullname)
        children = [
            name for name in self._substitutes if name.rpartition(".")[0] == fullname
        ]
        spec = importlib.machinery.ModuleSpec(
            fullname,
            _AliasLoader(target_module, search_path, children),
            is_package=search_path is not None,
        )
        if search_path is not None:
            spec.submodule_search_locations = list(search_path)
        return spec
