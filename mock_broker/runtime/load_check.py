"""Whether a scheduler module loads, and whether it refuses its arguments.

``flux module load`` passes its arguments to the module's ``mod_main``,
which checks them and exits if it refuses one.  Loading the module on a
fresh mock broker once with the arguments and once without tells the two
failures apart: a module that loads without the arguments but not with
them refuses the arguments (the caller's input error); one that fails even
without them cannot load at all (a fault of the module itself).
"""

from __future__ import annotations

from collections.abc import Sequence


def load_error(target: str, args: Sequence[str] = ()) -> str | None:
    """Why *target* (``PATH.py`` or ``pkg.module``, optionally ``:Class``)
    fails to load with *args* on a fresh mock broker, as the
    :class:`~mock_broker.runtime.module_host.ModuleLoadError` message;
    None if it loads."""
    from mock_broker.runtime.broker import MockBroker
    from mock_broker.runtime.module_host import ModuleLoadError

    broker = MockBroker()
    try:
        broker.load(target, list(args))
    except ModuleLoadError as exc:
        return str(exc)
    finally:
        broker.close()
    return None


def refused_args(target: str, args: Sequence[str]) -> str | None:
    """The module's own load error when *target* refuses *args*: it fails
    to load with them and loads without them.

    None when there are no arguments, when it loads with them, or when it
    fails even without them (that is the module's fault, for whoever runs
    it to report).
    """
    if not args:
        return None
    problem = load_error(target, args)
    if problem is None or load_error(target) is not None:
        return None
    return problem


__all__ = ["load_error", "refused_args"]
