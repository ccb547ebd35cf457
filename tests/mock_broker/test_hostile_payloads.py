"""Payloads a module writes that flux-core's jansson refuses: the broker's
services answer EPROTO, as flux-core's do, and never crash the broker."""

from __future__ import annotations

import errno
import re
import textwrap

import pytest
from mock_broker_helpers import messages

from mock_broker.flux_substitute.message import decode_payload
from mock_broker.machine import Machine
from mock_broker.runtime.module_host import ModuleLoadError

#: Requests the module sends, as raw payload text, before it returns.
REQUESTS = [
    ("service.add", '{"service": NaN}'),
    ("service.add", "[1, 2]"),
    ("service.remove", "5"),
    ("kvs.commit", '{"ops": [{"op": "put", "key": "a", "value": Infinity}]}'),
    ("kvs.lookup", '{"key": 1e400}'),
    ("resource.acquire", '{"x": 123456789012345678901234567890}'),
    ("job-manager.sched-ready", '{"mode": "limited", "limit": true}'),
    ("job-manager.raise", '{"id": [1], "severity": 0, "type": "x"}'),
    ("job-manager.raise", '{"id": 1, "severity": "0", "type": "x"}'),
    ("job-manager.raise", '{"id": 1, "severity": 9, "type": "x"}'),
    ("job-manager.raise", '{"id": 1, "severity": 0, "type": "x", "note": 5}'),
]


def test_requests_flux_core_cannot_unpack_are_answered_eproto(make_broker, tmp_path):
    module = tmp_path / "hostile_requests.py"
    module.write_text(
        textwrap.dedent(
            f"""\
            REQUESTS = {REQUESTS!r}

            def mod_main(h, *args):
                for topic, text in REQUESTS:
                    try:
                        h.rpc(topic, text).get()
                    except OSError:
                        pass
            """
        )
    )
    b = make_broker(Machine.uniform(1, 4))
    with pytest.raises(ModuleLoadError, match="exited"):  # it never runs a reactor
        b.load(str(module))
    answers = [
        (m["topic"].split(" ", 1)[0], m.get("errnum"))
        for m in messages(b)
        if m["from"] == "broker"
    ]
    assert answers == [(topic, errno.EPROTO) for topic, _ in REQUESTS]
    assert b.observer.violations == []


@pytest.mark.parametrize(
    "text, why",
    [
        ('{"a": NaN}', "NaN is not JSON"),
        ('{"a": -Infinity}', "-Infinity is not JSON"),
        ('{"a": 1e400}', "real number overflow"),
        ('{"a": 9223372036854775808}', "integer of 19 digits is too big (int64)"),
        ("5", "'[' or '{' expected"),
        ('"text"', "'[' or '{' expected"),
        ("[" * 5000 + "]" * 5000, "maximum parsing depth reached"),
    ],
)
def test_decode_payload_refuses_what_jansson_refuses(text, why):
    with pytest.raises(ValueError, match=re.escape(why)):
        decode_payload(text)


def test_decode_payload_reads_the_edges_jansson_reads():
    big = 2**63 - 1
    assert decode_payload(f'{{"a": {big}, "b": {-(2**63)}, "c": 1e308}}') == {
        "a": big,
        "b": -(2**63),
        "c": 1e308,
    }
    assert decode_payload('[1.5, "NaN", {"Infinity": null}]') == [
        1.5,
        "NaN",
        {"Infinity": None},
    ]
