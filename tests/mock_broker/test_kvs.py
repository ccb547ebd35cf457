"""The mock KVS reads values as a real one does through flux-python."""

from __future__ import annotations

import json

from mock_broker.flux_substitute.kvs import KVSTxn, _encode_ops
from mock_broker.services.kvs import KVSService


def _commit(kvs: KVSService, txn: KVSTxn) -> None:
    kvs.commit({"ops": json.loads(_encode_ops(txn.ops)), "flags": 0})


def test_a_raw_put_of_json_text_reads_as_the_value_it_encodes():
    kvs = KVSService()
    txn = KVSTxn()
    txn.put("job.a.R", {"version": 1, "execution": {"R_lite": []}})
    txn.put("job.b.R", '{"version":1,"execution":{"R_lite":[]}}', raw=True)
    txn.put("job.c.R", b'{"version":1,"execution":{"R_lite":[]}}', raw=True)
    _commit(kvs, txn)
    assert kvs.lookup("job.a.R") == kvs.lookup("job.b.R") == kvs.lookup("job.c.R")


def test_raw_text_that_is_not_json_reads_back_as_text():
    kvs = KVSService()
    txn = KVSTxn()
    txn.put("note", "not json {", raw=True)
    txn.put("quoted", '"text"', raw=True)
    _commit(kvs, txn)
    assert kvs.lookup("note") == "not json {"
    assert kvs.lookup("quoted") == "text"
