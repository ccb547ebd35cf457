"""The mock KVS reads values as a real one does through flux-python."""

from __future__ import annotations

import errno
import json

import pytest

from mock_broker.flux_substitute.kvs import KVSTxn, _encode_ops
from mock_broker.services.kvs import KVSError, KVSService


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


def test_a_value_read_is_a_copy_so_changing_it_changes_nothing_stored():
    kvs = KVSService()
    txn = KVSTxn()
    txn.put("job.a.R", {"version": 1, "execution": {"R_lite": []}})
    _commit(kvs, txn)
    read = kvs.lookup("job.a.R")
    read["execution"]["R_lite"].append({"rank": "0"})
    assert kvs.lookup("job.a.R") == {"version": 1, "execution": {"R_lite": []}}
    assert kvs.get("job.a.R") == {"version": 1, "execution": {"R_lite": []}}
    assert kvs.get("job.b.R", "absent") == "absent"


@pytest.mark.parametrize(
    "payload, why",
    [
        ([1], "the payload is not an object"),
        ({"ops": [1]}, "an op is not an object"),
        ({"ops": [{"op": "put", "key": "a", "raw": 5}]}, "raw value must be text"),
    ],
)
def test_a_malformed_commit_is_refused_and_changes_nothing(payload, why):
    kvs = KVSService()
    kvs.put("kept", {"n": 1})
    with pytest.raises(KVSError, match=why) as info:
        kvs.commit(payload)
    assert info.value.errnum == errno.EPROTO
    assert kvs.lookup("kept") == {"n": 1}
    assert "a" not in kvs
