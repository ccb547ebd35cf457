"""Install the reference schedulers into a Flux site's modprobe folder.

Writes DIR/modprobe.d/schedkit.toml (modprobe entries schedkit-fifo,
schedkit-easy and schedkit-conservative, each providing sched and
feasibility) and DIR/modules/schedkit-NAME.py (module files that let the
broker's own Python find this flux-schedkit installation).  DIR defaults to
{confdir}/modprobe of the `flux` on PATH, a folder modprobe always reads;
for any other folder, start the instance with FLUX_MODPROBE_PATH_APPEND=DIR.
Then one line of broker config selects a scheduler:

    [modules.alternatives]
    sched = "schedkit-easy"

Examples:

    flux-schedkit site-config /etc/flux/modprobe
    flux-schedkit site-config DIR --scheduler easy --args easy="queue-depth=64"
    flux-schedkit site-config DIR --priority easy=60   # the default scheduler
    flux-schedkit site-config DIR --print               # show, write nothing
    flux-schedkit site-config DIR --remove
    flux-schedkit site-config DIR --module my-sched=./my_sched.py  # your own

--module NAME=PATH installs a scheduler module of your own (on flux.scheduler
or flux_sched_base) the same way, as modprobe entry NAME, beside the
reference ones.  Module arguments are checked by loading each scheduler
with them (on the mock broker) before anything is written; a module of
your own is loaded so even without arguments.  Run the command again after
moving or upgrading flux-schedkit.

Exit status: 0 done; 1 a file could not be written or removed (or was not
written by this command: see --force); 2 a usage error (unknown scheduler,
bad argument or priority, no DIR and no flux on PATH); 130 interrupted.
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
PROG = "flux-schedkit site-config"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``flux-schedkit site-config``."""
    from flux_schedkit.reference import REFERENCE_SCHEDULERS

    names = ", ".join(REFERENCE_SCHEDULERS)
    parser.add_argument(
        "folder",
        metavar="DIR",
        nargs="?",
        help="modprobe folder (default: {confdir}/modprobe of the flux on PATH)",
    )
    parser.add_argument(
        "--scheduler",
        action="append",
        metavar="NAME",
        help=f"install only this one (repeat; default all: {names})",
    )
    parser.add_argument(
        "--module",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="also install your own scheduler module PATH as modprobe entry "
        "NAME (repeat)",
    )
    parser.add_argument(
        "--args",
        action="append",
        default=[],
        metavar='NAME="ARG ..."',
        help="module arguments of NAME (a reference scheduler or a --module), "
        'e.g. easy="queue-depth=64" (repeat)',
    )
    parser.add_argument(
        "--priority",
        action="append",
        default=[],
        metavar="NAME=N",
        help="modprobe priority of NAME (default 30; above 50 makes it the "
        "default scheduler of every instance)",
    )
    parser.add_argument(
        "--print",
        dest="print_only",
        action="store_true",
        help="print the modprobe entries that would be written, write nothing",
    )
    parser.add_argument(
        "--remove",
        action="store_true",
        help="remove the files this command wrote into DIR",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace files of the same name not written by this command",
    )


class _Usage(Exception):
    pass


def _per_scheduler(items: list[str], what: str, known) -> dict[str, str]:
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep:
            raise _Usage(f"--{what} {item!r}: expected NAME=VALUE")
        if name not in known:
            raise _Usage(
                f"--{what} {item!r}: unknown scheduler {name!r}: "
                f"choose one of {', '.join(known)}"
            )
        out[name] = value
    return out


def _default_folder() -> Path:
    flux = shutil.which("flux")
    if flux is None:
        raise _Usage("no DIR given and no flux on PATH to ask for its confdir")
    try:
        result = subprocess.run(
            [flux, "config", "builtin", "confdir"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise _Usage(f"no DIR given and {flux} config builtin failed: {exc}") from None
    confdir = result.stdout.strip()
    if result.returncode != 0 or not confdir:
        raise _Usage(f"no DIR given and {flux} config builtin confdir gave no folder")
    return Path(confdir) / "modprobe"


def _own_modules(items: list[str]) -> dict[str, Path]:
    """``--module NAME=PATH`` items: a module name of the site's own (not
    a reference scheduler's) and an existing file."""
    from flux_schedkit.reference import REFERENCE_SCHEDULERS
    from flux_schedkit.site_files import MODULE_NAME, module_name

    taken = set(REFERENCE_SCHEDULERS) | {module_name(p) for p in REFERENCE_SCHEDULERS}
    modules: dict[str, Path] = {}
    for item in items:
        name, sep, path = item.partition("=")
        if not sep or not path:
            raise _Usage(f"--module {item!r}: expected NAME=PATH")
        if not MODULE_NAME.fullmatch(name):
            raise _Usage(
                f"--module {item!r}: a module name is a letter, then letters, "
                "digits, - and _"
            )
        if name in taken or name in modules:
            raise _Usage(f"--module {item!r}: the name {name!r} is taken")
        if not Path(path).is_file():
            raise _Usage(f"--module {item!r}: {path}: no such file")
        modules[name] = Path(path).resolve()
    return modules


def _parse(args: argparse.Namespace):
    from flux_schedkit.reference import REFERENCE_SCHEDULERS
    from flux_schedkit.site_files import check_args

    known = list(REFERENCE_SCHEDULERS)
    policies = list(dict.fromkeys(args.scheduler or known))
    for name in policies:
        if name not in known:
            raise _Usage(
                f"unknown scheduler {name!r}: choose one of {', '.join(known)}"
            )
    modules = _own_modules(args.module)
    known += list(modules)
    module_args = {}
    for name, text in _per_scheduler(args.args, "args", known).items():
        try:
            module_args[name] = shlex.split(text)
        except ValueError as exc:
            raise _Usage(f"--args {name}: {exc}") from None
        problem = check_args(modules.get(name, name), module_args[name])
        if problem is not None:
            raise _Usage(f"--args {name}: {problem}")
    for name, path in modules.items():
        # A site's own module is loaded once even without arguments: one
        # that cannot load would only fail later, in the broker.
        if name not in module_args and (problem := check_args(path, [])):
            raise _Usage(f"--module {name}: {problem}")
    priorities = {}
    for name, text in _per_scheduler(args.priority, "priority", known).items():
        try:
            priorities[name] = int(text)
        except ValueError:
            raise _Usage(f"--priority {name}: {text!r} is not an integer") from None
    stray = (set(module_args) | set(priorities)) - set(policies) - set(modules)
    if stray:
        raise _Usage(f"--args/--priority name {sorted(stray)[0]!r}, not installed here")
    folder = Path(args.folder) if args.folder else _default_folder()
    return folder, policies, priorities, module_args, modules


def run(args: argparse.Namespace) -> int:
    """Install, print or remove the site files; return the exit status."""
    from flux_schedkit import site_files

    try:
        if args.remove and args.print_only:
            raise _Usage("--remove and --print do not go together")
        if args.remove:
            folder = Path(args.folder) if args.folder else _default_folder()
            for path in site_files.remove(folder):
                print(f"removed {path}")
            return EXIT_OK
        folder, policies, priorities, module_args, modules = _parse(args)
        files = site_files.site_files(
            folder, policies, priorities, module_args, modules
        )
        if args.print_only:
            sys.stdout.write(files[-1].text)
            sys.stdout.flush()
            return EXIT_OK
        site_files.install(files, force=args.force)
    except _Usage as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except site_files.SiteConfigError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except BrokenPipeError:
        raise  # reported by the command line, as for every subcommand
    except OSError as exc:
        # "PATH: reason", as the other commands name a file they cannot use.
        said = (
            f"{exc.filename}: {exc.strerror}" if exc.filename and exc.strerror else exc
        )
        print(f"{PROG}: {said}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    for f in files:
        print(f"wrote {f.path}")
    name = next(iter(modules), None) or site_files.module_name(policies[0])
    print(
        f'select one with [modules.alternatives] sched = "{name}" in the broker '
        f"config (or flux start --conf=modules.alternatives.sched={name})"
    )
    return EXIT_OK
