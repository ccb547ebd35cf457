"""Run flux-python's pure-Python scheduler code without libflux.

The pinned flux-python wheel ships the real ``flux.scheduler``,
``flux.brokermod`` and ``flux.resource`` modules, but its package init and
helpers load ``libflux-core.so``.  This package replaces only that native
layer, so the wheel's own files for the scheduler framework and resource
pool run unmodified inside the mock broker's interpreter.

:data:`SUBSTITUTES` is the one list of everything replaced.  :func:`install`
puts the replacements in front of the wheel on ``sys.meta_path`` after the
startup check (:mod:`.startup_check`) has confirmed that the pinned wheel
still has the layout and native entry points this substitution was written
against.  Where a real libflux is importable nothing is installed.
"""

from __future__ import annotations

import importlib.util
import sys

#: Pinned flux-python release whose Python code the substitution serves.
PINNED_FLUX_PYTHON = "0.88.0"

#: Every module of the ``flux``/``_flux`` namespace that project code
#: replaces, mapped to the module in this package that stands in for it.
#: Anything not listed comes from the wheel's own files.
SUBSTITUTES: dict[str, str] = {
    "_flux": "mock_broker.flux_substitute.native_pkg",
    "_flux._core": "mock_broker.flux_substitute.native_core",
    "flux": "mock_broker.flux_substitute.flux_init",
    "flux.constants": "mock_broker.flux_substitute.constants",
    "flux.idset": "mock_broker.flux_substitute.idset",
    "flux.hostlist": "mock_broker.flux_substitute.hostlist",
    "flux.kvs": "mock_broker.flux_substitute.kvs",
    "flux.job": "mock_broker.flux_substitute.job",
    "flux.job.JobID": "mock_broker.flux_substitute.jobid",
    "flux.future": "mock_broker.flux_substitute.future",
    "flux.rpc": "mock_broker.flux_substitute.rpc",
    "flux.message": "mock_broker.flux_substitute.message",
    "flux.core.watchers": "mock_broker.flux_substitute.watchers",
    "flux.core.handle": "mock_broker.flux_substitute.handle",
}

#: Wheel modules that must run from the wheel's own files, unmodified.
KEPT_MODULES: tuple[str, ...] = (
    "flux.scheduler",
    "flux.brokermod",
    "flux.job.kvslookup",
    "flux.resource",
    "flux.resource.ResourceCount",
    "flux.resource.ResourcePool",
    "flux.resource.ResourcePoolImplementation",
    "flux.resource.ResourceSet",
    "flux.resource.ResourceSetImplementation",
    "flux.resource.Rv1Pool",
    "flux.resource.Rv1Set",
    "flux.resource.TreePool",
)

_installed: bool | None = None


def native_flux_available() -> bool:
    """Return True if a real libflux-backed ``_flux._core`` can be imported."""
    if "_flux._core" in sys.modules:
        return not getattr(sys.modules["_flux._core"], "IS_SUBSTITUTE", False)
    if importlib.util.find_spec("_flux") is None:
        return False
    try:
        core = importlib.import_module("_flux._core")
    except ImportError:
        # The wheel's extension exists but libflux-core.so does not; forget
        # the half-imported namespace so the substitute can take its place.
        sys.modules.pop("_flux._core", None)
        sys.modules.pop("_flux", None)
        return False
    # Once install() has run, the import above finds the substitute.
    return not getattr(core, "IS_SUBSTITUTE", False)


def install() -> bool:
    """Install the substitution in this interpreter, once.

    Returns True if the substitute is active, False if a native libflux is
    present (then the real bindings are used and nothing is changed).

    Raises:
        SubstitutionError: the startup check found that the installed
            flux-python differs from what the substitution was written for;
            the message names the module or entry point.
    """
    global _installed
    if _installed is not None:
        return _installed
    if native_flux_available():
        _installed = False
        return False
    from mock_broker.flux_substitute import gaps, startup_check
    from mock_broker.flux_substitute.finder import SubstituteFinder

    wheel = startup_check.check_wheel()
    gaps.wheel_flux_dir = wheel.flux_dir
    sys.meta_path.insert(0, SubstituteFinder(SUBSTITUTES, wheel.flux_dir))
    _installed = True
    return True


class SubstitutionError(RuntimeError):
    """The pinned flux-python wheel no longer matches the substitution."""
