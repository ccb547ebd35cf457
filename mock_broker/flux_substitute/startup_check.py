"""Startup check: does the installed flux-python match the substitution?

Run by :func:`mock_broker.flux_substitute.install` before anything is
replaced.  It reads (never imports) the wheel's Python source and fails
with :class:`~mock_broker.flux_substitute.SubstitutionError`, naming the
module and the entry point, when:

- flux-python is missing or is not the pinned release;
- a kept module (``flux.scheduler``, ``flux.brokermod``,
  ``flux.job.kvslookup``, ``flux.resource.*``) is missing from the wheel;
- a module the kept ones import, directly or through other wheel modules,
  needs a native extension that is not substituted;
- kept code imports a name a substitute does not define, or calls a
  ``lib.*``/``ffi.*`` entry point, or a handle method, that the substitute
  does not provide.
"""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import importlib.util
import os
from dataclasses import dataclass, field

from mock_broker.flux_substitute import (
    KEPT_MODULES,
    PINNED_FLUX_PYTHON,
    SUBSTITUTES,
    SubstitutionError,
)

#: Imports of native code that kept modules make lazily, inside a function,
#: for a feature the mock broker does not offer.  Reaching them at run time
#: raises ImportError naming the module, as on a Flux build without it.
UNSUPPORTED_LAZY_IMPORTS = {
    # TreePool.from_hwloc_xml(): converting hwloc XML needs libflux's rhwloc.
    ("flux.resource.TreePool", "_flux._rhwloc_treepool"),
}

#: Native entry points kept code calls only for a feature the mock broker
#: does not offer.  Reaching one raises AttributeError naming it.
UNSUPPORTED_NATIVE_CALLS = {
    # job_kvs_lookup(original=True) unwraps the signed jobspec J, which the
    # mock's KVS does not hold: the J lookup fails with ENOENT first.
    ("flux.job.kvslookup", "flux_unwrap_string"),
    ("flux.job.kvslookup", "free"),
}

#: Variable names through which kept code reaches the broker handle.
_HANDLE_NAMES = {"h", "handle", "flux_handle"}
_HANDLE_ATTRS = {"_h", "handle"}


@dataclass
class WheelInfo:
    """Where the checked wheel lives and what was checked."""

    version: str
    flux_dir: str
    scanned: list[str] = field(default_factory=list)


def _module_file(flux_dir: str, name: str) -> str | None:
    rel = name.split(".")[1:]
    base = os.path.join(flux_dir, *rel)
    for candidate in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.isfile(candidate):
            return candidate
    return None


def _resolve_relative(module: str, is_pkg: bool, level: int, target: str | None):
    parts = module.split(".")
    if not is_pkg:
        parts = parts[:-1]
    if level > 1:
        parts = parts[: len(parts) - (level - 1)]
    return ".".join(parts + ([target] if target else []))


class _Scanner(ast.NodeVisitor):
    """Collect imports, native entry points and handle methods of one file."""

    def __init__(self, module: str, is_pkg: bool):
        self.module = module
        self.is_pkg = is_pkg
        self.imports: list[tuple[str, list[str], bool]] = []  # (mod, names, lazy)
        self.native_aliases: dict[str, str] = {}  # local name -> "lib"/"ffi"
        self.lib_uses: set[str] = set()
        self.ffi_uses: set[str] = set()
        self.handle_uses: set[str] = set()
        self._depth = 0

    def visit_FunctionDef(self, node):
        self._depth += 1
        self.generic_visit(node)
        self._depth -= 1

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Import(self, node):
        for alias in node.names:
            self.imports.append((alias.name, [], self._depth > 0))

    def visit_ImportFrom(self, node):
        mod = node.module
        if node.level:
            mod = _resolve_relative(self.module, self.is_pkg, node.level, mod)
        names = [a.name for a in node.names]
        self.imports.append((mod, names, self._depth > 0))
        if mod == "_flux._core" or mod == "flux.core.inner":
            for alias in node.names:
                if alias.name in ("lib", "ffi", "raw"):
                    self.native_aliases[alias.asname or alias.name] = alias.name

    def visit_Attribute(self, node):
        value = node.value
        if isinstance(value, ast.Name):
            kind = self.native_aliases.get(value.id)
            if kind == "ffi":
                self.ffi_uses.add(node.attr)
            elif kind in ("lib", "raw"):
                self.lib_uses.add(node.attr)
            elif value.id in _HANDLE_NAMES:
                self.handle_uses.add(node.attr)
        elif (
            isinstance(value, ast.Attribute)
            and isinstance(value.value, ast.Name)
            and value.value.id == "self"
            and value.attr in _HANDLE_ATTRS
        ):
            self.handle_uses.add(node.attr)
        self.generic_visit(node)


def _flux_python_version() -> str:
    try:
        return importlib.metadata.version("flux-python")
    except importlib.metadata.PackageNotFoundError:
        raise SubstitutionError(
            "flux-python is not installed; install the pinned release "
            f"flux-python=={PINNED_FLUX_PYTHON}"
        ) from None


def _wheel_flux_dir() -> str:
    spec = importlib.util.find_spec("flux")
    if spec is None or not spec.submodule_search_locations:
        raise SubstitutionError("flux-python is installed but has no 'flux' package")
    for location in spec.submodule_search_locations:
        if os.path.isfile(os.path.join(location, "scheduler.py")):
            return location
    raise SubstitutionError(
        "flux-python's 'flux' package has no scheduler.py "
        f"(searched {list(spec.submodule_search_locations)})"
    )


def _substitute(name: str):
    return importlib.import_module(SUBSTITUTES[name])


def check_wheel() -> WheelInfo:
    """Check the installed flux-python; return where it is.

    Raises:
        SubstitutionError: naming the first mismatch found.
    """
    version = _flux_python_version()
    if version != PINNED_FLUX_PYTHON:
        raise SubstitutionError(
            f"flux-python {version} is installed but the substitution is written "
            f"for {PINNED_FLUX_PYTHON}; install flux-python=={PINNED_FLUX_PYTHON}"
        )
    flux_dir = _wheel_flux_dir()
    info = WheelInfo(version, flux_dir)
    for name in KEPT_MODULES:
        if _module_file(flux_dir, name) is None:
            raise SubstitutionError(
                f"flux-python {version}: kept module {name} is missing from {flux_dir}"
            )

    from mock_broker.flux_substitute import native_core
    from mock_broker.flux_substitute.handle import Flux as SubstituteFlux

    pending = list(KEPT_MODULES)
    seen: set[str] = set()
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        path = _module_file(flux_dir, name)
        if path is None:
            raise SubstitutionError(
                f"flux-python {version}: module {name} (imported by kept code) "
                "is neither in the wheel nor substituted"
            )
        info.scanned.append(name)
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read(), path)
        scanner = _Scanner(name, path.endswith("__init__.py"))
        scanner.visit(tree)
        for mod, names, lazy in scanner.imports:
            pending.extend(_check_import(flux_dir, name, mod, names, lazy))
        for entry in sorted(scanner.lib_uses):
            if (name, entry) in UNSUPPORTED_NATIVE_CALLS:
                continue
            if entry not in native_core.PROVIDED_LIB and not hasattr(
                _substitute("flux.constants"), entry
            ):
                raise SubstitutionError(
                    f"{name} calls native entry point lib.{entry}, which the "
                    "substitute _flux._core does not provide"
                )
        for entry in sorted(scanner.ffi_uses - native_core.PROVIDED_FFI):
            raise SubstitutionError(
                f"{name} uses ffi.{entry}, which the substitute _flux._core "
                "does not provide"
            )
        for entry in sorted(scanner.handle_uses):
            if not hasattr(SubstituteFlux, entry):
                raise SubstitutionError(
                    f"{name} calls handle method {entry}(), which the substitute "
                    "flux.core.handle.Flux does not provide"
                )
    return info


def _check_import(
    flux_dir: str, importer: str, mod: str, names: list[str], lazy: bool
) -> list[str]:
    """Validate one import statement; return wheel modules still to scan."""
    top = mod.split(".")[0]
    if top not in ("flux", "_flux"):
        return []
    if (importer, mod) in UNSUPPORTED_LAZY_IMPORTS and lazy:
        return []
    if mod in SUBSTITUTES:
        module = _substitute(mod)
        for attr in names:
            if attr == "*" or hasattr(module, attr):
                continue
            if f"{mod}.{attr}" in SUBSTITUTES:
                continue
            raise SubstitutionError(
                f"{importer} imports {attr} from {mod}, which the substitute "
                f"{SUBSTITUTES[mod]} does not define"
            )
        return []
    if top == "_flux":
        raise SubstitutionError(
            f"{importer} imports native module {mod}, which is not substituted"
        )
    # A wheel module: scan it too, and any submodules imported from it.
    found = [mod]
    for attr in names:
        sub = f"{mod}.{attr}"
        if sub in SUBSTITUTES:
            continue
        if _module_file(flux_dir, sub) is not None:
            found.append(sub)
    return found
