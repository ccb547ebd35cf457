"""Stands in for the ``flux.job`` package: job ids and exception raising.

Only what scheduler modules use is provided: :class:`JobID`,
:func:`id_parse`, :func:`id_encode`, :func:`job_raise_async` and
:func:`job_raise`, with flux-python 0.88.0's signatures and argument
rules.
"""

from __future__ import annotations

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
