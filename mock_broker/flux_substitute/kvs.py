"""Stands in for ``flux.kvs``: transactions, commits and lookups.

Transactions are sent to the mock broker's KVS service as one
``kvs.commit`` request and applied atomically there; values are carried as
JSON, so a value a real KVS could not store fails at ``put()``.
"""

from __future__ import annotations

import json

from mock_broker.flux_substitute import constants  # noqa: F401 (flags live there)
from mock_broker.flux_substitute.message import compact_json


def _path_join(base: str, key: str) -> str:
    if base in ("", "."):
        return key
    return f"{base.rstrip('.')}.{key}"


class _EncodedPut:
    """A put whose value is already JSON text (encoded once, at put time)."""

    __slots__ = ("text",)

    def __init__(self, key: str, value):
        self.text = (
            '{"op":"put","key":'
            + json.dumps(key)
            + ',"value":'
            + compact_json(value)
            + "}"
        )


def _encode_ops(ops: list) -> str:
    parts = [
        op.text
        if isinstance(op, _EncodedPut)
        else json.dumps(op, separators=(",", ":"))
        for op in ops
    ]
    return "[" + ",".join(parts) + "]"


class KVSTxn:
    """A KVS transaction: a list of operations committed together."""

    def __init__(self, flux_handle=None, path=".", namespace=None):
        self.flux_handle = flux_handle
        self.path = path
        self.namespace = namespace
        self.ops: list[dict] = []

    def put(self, key, value, raw=False):
        """Store *value* (JSON-encodable, or bytes/str with ``raw=True``).

        The value is encoded now, as libflux does, so later changes to the
        caller's object do not reach the KVS.
        """
        if raw:
            text = value.decode() if isinstance(value, bytes) else str(value)
            op = {"op": "put", "key": _path_join(self.path, key), "raw": text}
        else:
            op = _EncodedPut(_path_join(self.path, key), value)
        self.ops.append(op)

    def mkdir(self, key):
        self.ops.append({"op": "mkdir", "key": _path_join(self.path, key)})

    def unlink(self, key):
        self.ops.append({"op": "unlink", "key": _path_join(self.path, key)})

    def symlink(self, key, target):
        self.ops.append(
            {"op": "symlink", "key": _path_join(self.path, key), "target": target}
        )

    def clear(self):
        self.ops = []

    def commit_async(self, flags=0):
        return commit_async(self.flux_handle, flags, self.namespace, _kvstxn=self)

    def commit(self, flags=0):
        commit(self.flux_handle, flags, self.namespace, _kvstxn=self)

    def __enter__(self):
        return self

    def __exit__(self, type_arg, value, tb):
        if type_arg is None:
            self.commit()


def _implicit_txn(flux_handle) -> KVSTxn:
    txn = getattr(flux_handle, "_kvs_implicit_txn", None)
    if txn is None:
        txn = KVSTxn(flux_handle)
        flux_handle._kvs_implicit_txn = txn
    return txn


def put(flux_handle, key, value, _kvstxn=None, raw=False):
    (_kvstxn or _implicit_txn(flux_handle)).put(key, value, raw=raw)


def put_mkdir(flux_handle, key, _kvstxn=None):
    (_kvstxn or _implicit_txn(flux_handle)).mkdir(key)


def put_unlink(flux_handle, key, _kvstxn=None):
    (_kvstxn or _implicit_txn(flux_handle)).unlink(key)


def put_symlink(flux_handle, key, target, _kvstxn=None):
    (_kvstxn or _implicit_txn(flux_handle)).symlink(key, target)


def commit_async(flux_handle, flags: int = 0, namespace=None, _kvstxn=None):
    """Send the transaction to the KVS; return a future for its completion."""
    txn = _kvstxn if _kvstxn is not None else _implicit_txn(flux_handle)
    ops, txn.ops = txn.ops, []
    payload = '{"ops":' + _encode_ops(ops) + ',"flags":' + str(int(flags))
    if namespace is not None:
        payload += ',"namespace":' + json.dumps(namespace)
    return flux_handle.rpc("kvs.commit", payload + "}")


def commit(flux_handle, flags: int = 0, namespace=None, _kvstxn=None):
    commit_async(flux_handle, flags, namespace, _kvstxn).get()


def get_key_direct(flux_handle, key, namespace=None):
    """Look up *key* and return its decoded value (OSError ENOENT if absent)."""
    payload = {"key": key}
    if namespace is not None:
        payload["namespace"] = namespace
    return flux_handle.rpc("kvs.lookup", payload).get()["value"]


def get(flux_handle, key, namespace=None, _kvstxn=None):
    return get_key_direct(flux_handle, key, namespace)


def exists(flux_handle, key, namespace=None) -> bool:
    try:
        get_key_direct(flux_handle, key, namespace)
    except FileNotFoundError:
        return False
    return True
