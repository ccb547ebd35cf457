"""The mock broker's job-info service: ``job-info.lookup``.

A scheduler reads what flux-core keeps for a job under its KVS directory
(``job.<dothex>.jobspec``, ``job.<dothex>.R``) either straight from the KVS
or through job-info, as ``flux job info ID KEY`` does.  This answers the
request as flux-core 0.88's job-info module does for the instance owner:
``{"id": ID, KEY: VALUE, ...}`` with each value the stored JSON text, or,
with ``FLUX_JOB_LOOKUP_JSON_DECODE``, ``jobspec`` and ``R`` as objects.

The mock keeps no eventlog: a change to a job's R (a new expiration) is
written into the stored R, so ``FLUX_JOB_LOOKUP_CURRENT`` reads the same
values as a lookup without it.
"""

from __future__ import annotations

import errno
import json

from flux.job import JobID

from mock_broker.services.kvs import KVSError, KVSService

#: flux-core's ``FLUX_JOB_LOOKUP_JSON_DECODE`` and ``FLUX_JOB_LOOKUP_CURRENT``.
LOOKUP_JSON_DECODE = 1
LOOKUP_CURRENT = 2

#: Keys job-info decodes with ``FLUX_JOB_LOOKUP_JSON_DECODE``.
_DECODED_KEYS = ("jobspec", "R")


def _is_integer(value) -> bool:
    """A JSON integer jansson's ``I``/``i`` take (no boolean; int64)."""
    return (
        isinstance(value, int)
        and not isinstance(value, bool)
        and (-(2**63) <= value < 2**63)
    )


class JobInfoService:
    """``job-info.lookup`` over the mock's KVS and job-manager.

    Args:
        kvs: where the jobs' keys are.
        known: tells whether a job id was ever submitted to the instance
            (flux-core checks the job's eventlog, which exists from
            submission on).
    """

    def __init__(self, kvs: KVSService, known):
        self.kvs = kvs
        self.known = known

    def lookup(self, payload) -> dict:
        """Answer one ``job-info.lookup`` request payload.

        Raises:
            KVSError: with flux-core's errno and text: EPROTO for a payload
                its unpack refuses (errstr None then, as flux-core sends
                none) or an unknown flag, ENOENT ``invalid job id`` for a
                job the instance never had and ``KEY: key not found`` for
                a key the job does not have (yet).
        """
        if not isinstance(payload, dict):
            raise KVSError(errno.EPROTO, None)
        jobid, keys, flags = (payload.get(k) for k in ("id", "keys", "flags"))
        # flux_request_unpack "{s:I s:o s:i}": a missing or mistyped field
        # fails before any check of ours, with no error text.
        if not (_is_integer(jobid) and _is_integer(flags)) or "keys" not in payload:
            raise KVSError(errno.EPROTO, None)
        if flags & ~(LOOKUP_JSON_DECODE | LOOKUP_CURRENT):
            raise KVSError(errno.EPROTO, "lookup request rejected with invalid flag")
        if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
            raise KVSError(errno.EPROTO, None)
        if not self.known(jobid):
            raise KVSError(errno.ENOENT, "invalid job id")
        base = JobID(jobid).kvs
        response: dict = {"id": jobid}
        for key in keys:
            text = self.kvs.text(f"{base}.{key}")
            if text is None:
                raise KVSError(errno.ENOENT, f"{key}: key not found")
            if flags & LOOKUP_JSON_DECODE and key in _DECODED_KEYS:
                response[key] = json.loads(text)
            else:
                response[key] = text
        return response
