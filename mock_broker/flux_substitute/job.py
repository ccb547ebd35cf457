"""Stands in for the ``flux.job`` package: job ids and exception raising.

Only what scheduler modules use is provided: :class:`JobID`,
:func:`id_parse`, :func:`id_encode` and :func:`job_raise_async`.
"""

from __future__ import annotations

from mock_broker.flux_substitute.jobid import JobID, id_encode, id_parse

__all__ = ["JobID", "id_encode", "id_parse", "job_raise_async", "job_raise"]


def job_raise_async(flux_handle, jobid, type="cancel", severity=0, note=None):
    """Raise an exception on a job (``job-manager.raise``); returns a future."""
    payload = {"id": int(jobid), "type": type, "severity": int(severity)}
    payload["note"] = note if note is not None else ""
    return flux_handle.rpc("job-manager.raise", payload)


def job_raise(flux_handle, jobid, type="cancel", severity=0, note=None):
    """Synchronous :func:`job_raise_async`."""
    job_raise_async(flux_handle, jobid, type, severity, note).get()
