"""The mock broker's KVS: a flat dictionary of committed keys.

Commits are atomic and ordered; a key's value is the JSON value last
committed.  Only what schedulers use is modelled (put, unlink, mkdir,
lookup); namespaces other than the primary one are refused.  Values are
kept as their JSON text, as a real KVS keeps bytes: each read decodes a
fresh copy (a reader that changes what it read changes nothing stored),
and a long run's thousands of R objects are strings the garbage
collector need not walk.
"""

from __future__ import annotations

import errno
import json

from mock_broker.flux_substitute.message import compact_json


class KVSError(Exception):
    """A service's error response: *errnum*, and *text* (None: the service
    sends no error text, and the requester sees strerror's)."""

    def __init__(self, errnum: int, text: str | None):
        super().__init__(text)
        self.errnum = errnum
        self.text = text


def _raw_value(text: str):
    """A raw value as a JSON lookup reads it: a real KVS keeps bytes, so a
    raw put of JSON text is the same value as a JSON put of what it
    encodes; other text reads back as the text (as flux-python's
    ``kvs.get`` returns it)."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def _text(value) -> str:
    """The JSON text of a value put as JSON (validated when it came in: it
    was decoded from a message, or is the broker's own)."""
    return compact_json(value)


class KVSService:
    """Keys to JSON values, with a commit count."""

    def __init__(self):
        self._store: dict[str, str] = {}  # key -> the value's text
        self.commits = 0

    def commit(self, payload: dict) -> None:
        if not isinstance(payload, dict):
            raise KVSError(errno.EPROTO, "kvs.commit: the payload is not an object")
        if payload.get("namespace") not in (None, "primary"):
            raise KVSError(errno.ENOTSUP, "only the primary KVS namespace exists")
        ops = payload.get("ops")
        if not isinstance(ops, list):
            raise KVSError(errno.EPROTO, "kvs.commit: ops must be a list")
        for op in ops:
            if not isinstance(op, dict):
                raise KVSError(errno.EPROTO, "kvs.commit: an op is not an object")
            kind, key = op.get("op"), op.get("key")
            if not isinstance(key, str) or not key:
                raise KVSError(errno.EINVAL, f"kvs.commit: bad key {key!r}")
            if kind not in ("put", "unlink", "mkdir", "symlink"):
                raise KVSError(errno.EPROTO, f"kvs.commit: unknown op {kind!r}")
            if kind == "put" and "raw" in op and not isinstance(op["raw"], str):
                raise KVSError(errno.EPROTO, "kvs.commit: raw value must be text")
        # Validated as a whole first, so applying cannot fail half-way.
        store = self._store
        for op in ops:
            kind, key = op["op"], op["key"]
            if kind == "put":
                store[key] = op["raw"] if "raw" in op else _text(op.get("value"))
            elif kind == "unlink":
                prefix = key + "."
                for k in [k for k in store if k == key or k.startswith(prefix)]:
                    del store[k]
            elif kind == "mkdir":
                store.setdefault(key + ".", "{}")
            else:
                store[key] = _text({"symlink": op.get("target")})
        self.commits += 1

    def put(self, key: str, value) -> None:
        """Write one key directly (the broker's own writes, e.g. R of jobs
        that were running before the scenario started)."""
        self._store[key] = _text(value)

    def put_text(self, key: str, text: str) -> None:
        """Write one key whose value is already compact JSON text (a
        jobspec encoded once at submission: the stored text is that same
        string, not a second copy)."""
        self._store[key] = text

    def text(self, key: str) -> str | None:
        """The stored text of *key* (JSON, or a raw put's text), or None."""
        return self._store.get(key)

    def lookup(self, key: str):
        if key not in self._store:
            raise KVSError(errno.ENOENT, f"{key}: No such file or directory")
        return _raw_value(self._store[key])

    def get(self, key: str, default=None):
        text = self._store.get(key)
        return default if text is None else _raw_value(text)

    def __contains__(self, key: str) -> bool:
        return key in self._store
