"""Stands in for the ``flux.job`` package: job ids and exception raising.

The wheel's ``flux/job/__init__.py`` imports every submodule at once, some
of which wrap libflux (``flux.job._wrapper``), so the package init is
replaced.  Defined here, with flux-python 0.88.0's signatures and argument
rules: :class:`JobID`, :func:`id_parse`, :func:`id_encode`,
:func:`job_raise_async` and :func:`job_raise`.  Every other name the real
package exports is loaded on first use from the wheel's own submodule
(the package's search path is the wheel's ``flux/job``): ``from flux.job
import job_info_lookup`` runs the wheel's ``flux.job.kvslookup``.  A name
whose submodule needs what is not substituted raises ImportError saying so.
"""

from __future__ import annotations

import ast
import importlib
import os

from mock_broker.flux_substitute._binding import c_int, c_uint64
from mock_broker.flux_substitute.jobid import JobID, id_encode, id_parse
from mock_broker.flux_substitute.rpc import RPC

__all__ = ["JobID", "id_encode", "id_parse", "job_raise_async", "job_raise"]


class _RaiseFuture(RPC):
    """The future of ``job-manager.raise``: a plain flux-python ``Future``,
    whose ``get()`` waits and raises on error but returns None."""

    def get(self):
        self._result()


def job_raise_async(flux_handle, jobid, exc_type, severity=0, note=None):
    """Raise an exception on a job (``job-manager.raise``); returns a future.

    As in flux-python, *exc_type* must be a string and *note*, if given and
    not empty, too (else AttributeError from ``.encode()``); ``int(jobid)``
    must fit 64 bits unsigned and *severity* a C int (else OverflowError,
    or TypeError for a non-integer severity).
    """
    note_bytes = note.encode() if note else None
    exc_type.encode()
    payload = {
        "id": c_uint64(int(jobid)),
        "type": exc_type,
        "severity": c_int(severity),
    }
    if note_bytes is not None:
        payload["note"] = note
    return _RaiseFuture(flux_handle, "job-manager.raise", payload)


def job_raise(flux_handle, jobid, exc_type, severity=0, note=None):
    """Synchronous :func:`job_raise_async`; returns None."""
    return job_raise_async(flux_handle, jobid, exc_type, severity, note).get()


def _wheel_exports() -> dict[str, str]:
    """What the wheel's ``flux/job/__init__.py`` exports: each name it
    imports from a ``flux.job`` submodule, mapped to that submodule (read
    from its source, never executed)."""
    exports: dict[str, str] = {}
    for folder in globals().get("__path__", ()):
        init = os.path.join(folder, "__init__.py")
        if not os.path.isfile(init):
            continue
        with open(init, encoding="utf-8") as fh:
            tree = ast.parse(fh.read(), init)
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                "flux.job."
            ):
                for alias in node.names:
                    exports.setdefault(alias.asname or alias.name, node.module)
    return exports


_EXPORTS: dict[str, str] | None = None


def __getattr__(name: str):
    """Load *name* from the wheel's submodule that defines it (PEP 562)."""
    global _EXPORTS
    if _EXPORTS is None:
        _EXPORTS = _wheel_exports()
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'flux.job' has no attribute {name!r}")
    try:
        loaded = importlib.import_module(module)
        values = {n: getattr(loaded, n) for n, m in _EXPORTS.items() if m == module}
    except (ImportError, AttributeError) as exc:
        # (AttributeError: a name the substitute lacks, reached at import.)
        raise ImportError(
            f"flux.job.{name} (from {module}) does not load on the mock "
            f"broker's flux substitute: {exc}",
            name="flux.job",
        ) from exc
    # All of the submodule's exports at once, as the real init binds them:
    # importing flux.job.submit bound the package's name ``submit`` to the
    # submodule, and the function must win, as it does in flux-python.
    globals().update(values)
    return values[name]
