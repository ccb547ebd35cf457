"""Says when a module needs a flux-python name the substitute lacks.

A scheduler module may import any part of flux-python 0.88.  Where the
substitute stands in for a module (:data:`~mock_broker.flux_substitute.SUBSTITUTES`)
but not for every name the wheel's module defines, the import fails with
Python's words, which name the stand-in's own module.  :func:`missing_name`
tells that case apart and says it in flux-python's terms.
"""

from __future__ import annotations

import ast
import re

from mock_broker.flux_substitute import PINNED_FLUX_PYTHON, SUBSTITUTES

#: Python's message for ``from M import X`` where M has no X.
_CANNOT_IMPORT = re.compile(
    r"cannot import name '(?P<name>\w+)' from '(?P<mod>[\w.]+)'"
)
#: Python's message for ``M.X`` where M has no X.
_NO_ATTRIBUTE = re.compile(r"module '(?P<mod>[\w.]+)' has no attribute '(?P<name>\w+)'")

_FLUX_NAME = {stand_in: name for name, stand_in in SUBSTITUTES.items()}

#: The wheel's ``flux`` package folder, set when the substitute is installed.
wheel_flux_dir: str | None = None


def missing_name(exc: BaseException) -> str | None:
    """If *exc* is an ImportError or AttributeError for a name of a module
    the substitute stands in for, one line saying so in flux-python's
    terms: whether flux-python 0.88 has that name (then the kit cannot
    host the module) or not (then the module's import is wrong anywhere);
    else None."""
    if not isinstance(exc, (ImportError, AttributeError)):
        return None
    try:
        text = str(exc)
    except Exception:  # the exception's own __str__ failed: not ours to say
        return None
    found = _CANNOT_IMPORT.search(text) or _NO_ATTRIBUTE.search(text)
    if found is None:
        return None
    module = _FLUX_NAME.get(found["mod"], found["mod"])
    if module not in SUBSTITUTES:
        return None
    name = found["name"]
    if name in _wheel_names(module):
        return (
            f"{module}.{name} is part of flux-python {PINNED_FLUX_PYTHON}, but "
            "flux-schedkit's mock broker does not stand in for it: this module "
            "cannot be hosted without Flux (load it into a real instance)"
        )
    return (
        f"cannot import name {name!r} from {module!r} (flux-python "
        f"{PINNED_FLUX_PYTHON} has no such name either)"
    )


def _wheel_names(module: str) -> set[str]:
    """Top-level names the wheel's file of *module* defines or imports."""
    from mock_broker.flux_substitute.startup_check import _module_file

    path = None if wheel_flux_dir is None else _module_file(wheel_flux_dir, module)
    if path is None:
        return set()
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError, ValueError):
        return set()
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names
