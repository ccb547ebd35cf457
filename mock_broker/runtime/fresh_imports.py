"""A scheduler's own helper modules, imported afresh at each load.

flux-core 0.88 starts a new process for each load of a Python module, so
the modules a scheduler brings with it (a ``state.py`` beside its file,
the rest of its package) run from their first line at every load, with
empty globals.  Here every load shares one process, and ``sys.modules``
would hand a second load the helpers of the first with all they hold: a
scheduler that kept its running jobs in a helper module, and read them
from there instead of from the hello that follows a restart, would pass
the kit's restarts and double-book those jobs' resources in Flux.

:func:`forget_own_imports`, called before each load of a target, drops
the modules that the target's earlier loads brought into ``sys.modules``
and that are its own code: pure-Python modules under the directory of the
scheduler's file (not a site-packages or standard library directory
below it), or the modules of the package a dotted target names.  This
project's own packages, flux-python, extension modules and other
installed libraries are kept as they are (a library's state is rarely a
scheduler's, and many cannot be imported twice in one process).
"""

from __future__ import annotations

import os
import site
import sys
import sysconfig
from collections.abc import Callable
from types import ModuleType

#: Top-level packages never imported afresh: flux-python and this
#: project's, which the host itself holds.
KEPT_PACKAGES = frozenset(
    {
        "flux",
        "_flux",
        "flux_schedkit",
        "flux_sched_base",
        "mock_broker",
        "conformance",
        "replay",
    }
)

#: Names the host gives a scheduler file it imports (re-executed anyway).
HOST_PREFIX = "_schedkit_module_"

#: Per load target: the names in ``sys.modules`` just before its last load.
_BEFORE: dict[str, frozenset[str]] = {}


def _library_dirs() -> list[str]:
    """Directories of the standard library and installed packages."""
    paths = sysconfig.get_paths()
    dirs = [paths[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")]
    dirs.extend(site.getsitepackages())
    dirs.append(site.getusersitepackages())
    return [os.path.join(os.path.realpath(d), "") for d in dirs if d]


def _owner(target: str) -> Callable[[str, ModuleType], bool]:
    """Whether a module (name, object) is the own code of *target*: an
    absolute ``.py`` path or a dotted module name."""
    if os.path.isabs(target):
        root = os.path.join(os.path.dirname(os.path.realpath(target)), "")
        libraries = _library_dirs()

        def own_file(path: str) -> bool:
            real = os.path.realpath(path)
            return real.startswith(root) and not any(
                real.startswith(d) for d in libraries
            )

    else:
        top = target.partition(".")[0]

        def own_file(path: str) -> bool:
            return True

    def owns(name: str, module: ModuleType) -> bool:
        first = name.partition(".")[0]
        if first in KEPT_PACKAGES or name.startswith(HOST_PREFIX):
            return False
        if not os.path.isabs(target) and first != top:
            return False
        path = getattr(module, "__file__", None)
        return isinstance(path, str) and path.endswith(".py") and own_file(path)

    return owns


def forget_own_imports(target: str) -> dict[str, ModuleType]:
    """Before a load of *target* (an absolute ``.py`` path or a dotted
    module name): drop from ``sys.modules`` the modules of its own code
    that its earlier loads in this process imported (see the module doc),
    so this load imports them afresh; return them by name, for
    :func:`restore` if the load falls back on an earlier import."""
    before = _BEFORE.get(target)
    dropped: dict[str, ModuleType] = {}
    if before is not None:
        owns = _owner(target)
        for name, module in list(sys.modules.items()):
            if name not in before and module is not None and owns(name, module):
                dropped[name] = sys.modules.pop(name)
    _BEFORE[target] = frozenset(sys.modules)
    return dropped


def restore(dropped: dict[str, ModuleType]) -> None:
    """Put back what :func:`forget_own_imports` dropped, where this load
    did not import a module of that name again."""
    for name, module in dropped.items():
        sys.modules.setdefault(name, module)
