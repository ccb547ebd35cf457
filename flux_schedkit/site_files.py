"""The files that make the reference schedulers selectable in a Flux site.

flux-core's ``flux modprobe`` reads ``modprobe.d/*.toml`` in each folder of
its search path (``{confdir}/modprobe`` by default, plus the folders named
by ``FLUX_MODPROBE_PATH_APPEND``).  For a modprobe folder *DIR* this module
writes:

- ``DIR/modprobe.d/schedkit.toml``: one ``[[modules]]`` entry per reference
  scheduler, from the template shipped with the package
  (``schedulers/modprobe.toml``), with the path of its module file, its
  priority and its arguments;
- ``DIR/modules/schedkit-NAME.py``: one small module file per scheduler.
  The broker runs a Python module with its own interpreter, which does not
  see the environment flux-schedkit was installed in; this file appends the
  folders holding ``flux_sched_base`` and its dependencies, as this
  installation sees them, to ``sys.path`` and runs the reference module
  file.  Folders are appended, so the broker's own ``flux`` package always
  comes first.

A site's own scheduler module (``--module NAME=PATH``: a file written on
``flux.scheduler`` or on ``flux_sched_base``) is installed the same way,
as ``DIR/modules/NAME.py`` and a ``NAME`` entry beside the reference ones.

Every file written carries :data:`MARKER`; a file without it is never
overwritten or removed unless the caller forces it.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from flux_schedkit.reference import (
    REFERENCE_SCHEDULERS,
    reference_path,
    schedulers_dir,
)

#: Top-level packages the scheduler modules import at run time, besides
#: flux-python and the standard library (tests check the modules' imports).
RUNTIME_PACKAGES: tuple[str, ...] = ("flux_sched_base", "sortedcontainers")

#: Oldest Python the modules run on (``requires-python`` of the project).
MIN_PYTHON = (3, 11)

#: First line of every file this module writes.
MARKER = "Written by flux-schedkit site-config"

TOML_NAME = "schedkit.toml"
TEMPLATE_NAME = "modprobe.toml"


def _version() -> str:
    try:
        return metadata.version("flux-schedkit")
    except metadata.PackageNotFoundError:
        return "not installed"


class SiteConfigError(Exception):
    """A site configuration that cannot be written as asked."""


@dataclass(frozen=True)
class SiteFile:
    """A file to write: its path and its text."""

    path: Path
    text: str


def module_name(policy: str) -> str:
    """The modprobe and broker module name of reference scheduler *policy*."""
    return Path(REFERENCE_SCHEDULERS[policy]).stem


def template_entries() -> list[dict]:
    """The ``[[modules]]`` entries shipped with the package, in order."""
    path = schedulers_dir() / TEMPLATE_NAME
    try:
        with open(path, "rb") as fp:
            return list(tomllib.load(fp)["modules"])
    except (OSError, tomllib.TOMLDecodeError, KeyError) as exc:
        raise SiteConfigError(
            f"cannot read the shipped entries {path}: {exc}"
        ) from None


def import_roots(packages: Iterable[str] = RUNTIME_PACKAGES) -> list[str]:
    """The ``sys.path`` folders from which this interpreter imports
    *packages*, without repeats, in the order of *packages*."""
    roots: list[str] = []
    for name in packages:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            raise SiteConfigError(f"{name} is not importable from {sys.executable}")
        origin = Path(spec.origin).resolve()
        # a package's origin is its __init__.py; a single-file module's is itself
        root = origin.parent.parent if origin.name == "__init__.py" else origin.parent
        if str(root) not in roots:
            roots.append(str(root))
    return roots


#: A name modprobe and the broker accept for a module of the site's own.
MODULE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")


def loader_text(name: str, module_file: Path, roots: Sequence[str]) -> str:
    """The module file the broker loads as *name*, running *module_file*
    (see the module doc)."""
    minimum = ".".join(map(str, MIN_PYTHON))
    return f'''"""{MARKER} (flux-schedkit {_version()}).

Broker module {name}.  The broker runs it with its own Python, which does
not see the flux-schedkit installation of
    {sys.executable}
so this file appends the folders where that installation finds
flux_sched_base and its dependencies to sys.path (after the broker's own),
then runs the scheduler's module file.  Run `flux-schedkit site-config` again
after moving or upgrading flux-schedkit.
"""

import importlib.util
import sys

import flux.brokermod

ROOTS = {json.dumps(list(roots), indent=4)}
MODULE_FILE = {json.dumps(str(module_file))}

if sys.version_info < {MIN_PYTHON!r}:
    raise ImportError(
        "{name} needs Python >= {minimum}; this broker runs " + sys.version.split()[0]
    )
for root in ROOTS:
    if root not in sys.path:
        sys.path.append(root)
spec = importlib.util.spec_from_file_location("{name.replace("-", "_")}", MODULE_FILE)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
# Its mod_main, or the one flux-python makes for a single module class.
mod_main = flux.brokermod.resolve_entry_point(module)
'''


def _toml_value(value) -> str:
    # JSON strings without \\u escapes of non-ASCII are TOML basic strings.
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"no TOML form for {value!r}")


def toml_text(entries: Sequence[Mapping], folder: Path) -> str:
    """``modprobe.d/schedkit.toml`` for *entries* installed in *folder*."""
    names = [entry["name"] for entry in entries]
    lines = [
        f"# {MARKER} (flux-schedkit {_version()}) in {folder}.",
        "# Run it again to change these entries; hand edits are overwritten.",
        "# Select a scheduler for an instance in its broker config:",
        "#     [modules.alternatives]",
        f'#     sched = "{names[0]}"',
        "# Per-instance arguments replace the ones below:",
        "#     [modules." + names[0] + "]",
        '#     args = ["queue-depth=unlimited"]',
    ]
    for entry in entries:
        lines += ["", "[[modules]]"]
        lines += [f"{key} = {_toml_value(value)}" for key, value in entry.items()]
    return "\n".join(lines) + "\n"


def site_files(
    folder: Path,
    policies: Sequence[str],
    priorities: Mapping[str, int] | None = None,
    args: Mapping[str, Sequence[str]] | None = None,
    modules: Mapping[str, Path] | None = None,
) -> list[SiteFile]:
    """The files that install *policies* (and the site's own *modules*, a
    map of module name to module file) into modprobe folder *folder*.

    *priorities* and *args* map a policy or module name to its modprobe
    priority and its module arguments; unlisted ones keep the template's
    priority and get no arguments.  A module of the site's own gets the
    entry of the reference schedulers (both services, after the
    job-manager and resource).  The TOML comes last, so that a reader of
    the folder never sees an entry whose module file is missing.
    """
    folder = folder.resolve()
    priorities = priorities or {}
    args = args or {}
    template = {entry["name"]: entry for entry in template_entries()}
    roots = import_roots()
    installs = []  # (key of priorities/args, module name, module file, template)
    for policy in policies:
        name = module_name(policy)
        if name not in template:
            raise SiteConfigError(f"the shipped entries lack {name}")
        installs.append((policy, name, reference_path(policy), template[name]))
    own_template = next(iter(template.values()))
    for name, path in (modules or {}).items():
        installs.append((name, name, Path(path).resolve(), own_template))
    files: list[SiteFile] = []
    entries: list[dict] = []
    for key, name, module_file, shipped in installs:
        loader = folder / "modules" / f"{name}.py"
        files.append(SiteFile(loader, loader_text(name, module_file, roots)))
        entry = {"name": name, "module": str(loader)}
        entry.update((k, v) for k, v in shipped.items() if k != "name")
        if key in priorities:
            entry["priority"] = int(priorities[key])
        if args.get(key):
            entry["args"] = list(args[key])
        entries.append(entry)
    files.append(
        SiteFile(folder / "modprobe.d" / TOML_NAME, toml_text(entries, folder))
    )
    return files


def written_by_us(path: Path) -> bool:
    """True if *path* exists and was written by :func:`install`."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fp:
            return MARKER in fp.readline()
    except OSError:
        return False


def install(files: Sequence[SiteFile], force: bool = False) -> None:
    """Write *files*; refuse (changing nothing) to replace a file that
    :func:`written_by_us` does not recognise, unless *force*."""
    if not force:
        foreign = [
            f.path for f in files if f.path.exists() and not written_by_us(f.path)
        ]
        if foreign:
            raise SiteConfigError(
                f"{foreign[0]} exists and was not written by flux-schedkit "
                "site-config (use --force to replace it)"
            )
    for f in files:
        f.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = f.path.with_name(f".{f.path.name}.tmp")
        tmp.write_text(f.text, encoding="utf-8")
        tmp.replace(f.path)


def remove(folder: Path) -> list[Path]:
    """Remove the files :func:`install` wrote into *folder*; return them.

    The TOML goes first, so that modprobe never names a missing module.
    """
    folder = folder.resolve()
    candidates = [folder / "modprobe.d" / TOML_NAME]
    candidates += sorted((folder / "modules").glob("*.py"))
    removed = []
    for path in candidates:
        if written_by_us(path):
            path.unlink()
            removed.append(path)
    return removed


def check_args(policy: str | Path, args: Sequence[str]) -> str | None:
    """Why *policy* (a reference scheduler's name, or a module file) would
    refuse to load with *args*, or None if it loads.

    The module is loaded with *args* on the mock broker, so its own
    argument checks decide, exactly as they will in the broker.
    """
    from mock_broker import flux_substitute

    if not flux_substitute.install():
        return None  # a real libflux is loaded here: the broker will check
    from mock_broker.runtime.load_check import load_error

    path = policy if isinstance(policy, Path) else reference_path(policy)
    return load_error(str(path), args)
