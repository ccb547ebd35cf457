"""``flux.message`` and ``flux.future`` substitutes: the rules flux-python
0.88.0's own classes enforce, seen from a module hosted by the mock broker."""

from __future__ import annotations

import errno
import os
import textwrap

import pytest

from conformance.referee import Referee
from mock_broker.flux_substitute import constants
from mock_broker.flux_substitute.message import Message
from mock_broker.runtime.broker import MockBroker

PROBE = textwrap.dedent(
    """
    import errno

    from flux.future import FutureExt

    STOPPED_CALLS = []


    def outcome(fn):
        try:
            fn()
        except Exception as exc:
            return [type(exc).__name__, getattr(exc, "errno", None)]
        return "ok"


    def mod_main(h, *args):
        watchers = []

        def on_message(handle, watcher, msg, arg):
            out = {"watcher": watcher is watchers[0], "arg": arg}
            out["payload"] = outcome(lambda: msg.payload)
            out["decode"] = list(msg.decode())
            if msg.payload_str is not None:
                first = msg.payload
                first["mutated"] = True
                out["fresh"] = "mutated" not in msg.payload
            handle.respond(msg, out)

        def on_futures(handle, watcher, msg, arg):
            out = {}
            f = handle.rpc("kvs.commit", {"ops": [], "flags": 0})
            out["then_none"] = outcome(lambda: f.then(None))
            f.then(lambda fut: None)
            out["then_twice"] = outcome(lambda: f.then(lambda fut: None))
            g = handle.rpc("kvs.commit", {"ops": [], "flags": 0})
            a, b = g.get(), g.get()
            out["rpc_fresh"] = a == b and a is not b
            s = handle.rpc("kvs.commit", {"ops": [], "flags": 0})
            s.stop()
            s.then(lambda fut: STOPPED_CALLS.append(1))
            ext = FutureExt(
                lambda fut: fut.fulfill({"t": (1, 2), 3: "x"}), flux_handle=handle
            )
            out["ext"] = ext.get()
            bad = FutureExt(lambda fut: None, flux_handle=handle)
            out["ext_set"] = outcome(lambda: bad.fulfill({1, 2}))
            try:
                handle.msg_watcher_create(on_message, topic_glob=5)
            except TypeError as exc:
                out["bad_glob"] = exc.args[0]
            handle.respond(msg, out)

        def on_report(handle, watcher, msg, arg):
            handle.respond(msg, {"stopped_calls": len(STOPPED_CALLS)})

        watchers.append(h.msg_watcher_create(on_message, topic_glob="probe.msg", args=7))
        watchers.append(h.msg_watcher_create(on_futures, topic_glob=b"probe.futures"))
        watchers.append(h.msg_watcher_create(on_report, topic_glob="probe.report"))
        for w in watchers:
            w.start()
        h.reactor_run()
    """
)


@pytest.fixture
def probe(tmp_path):
    path = tmp_path / "probe.py"
    path.write_text(PROBE)
    broker = MockBroker()
    Referee.attach(broker)
    broker.load(str(path))
    yield broker
    broker.close()


def test_message_handlers_get_the_watcher_and_a_flux_python_message(probe):
    out = probe.rpc("probe.msg", {"a": 1}, module="probe")
    # binding: message_handler_wrapper calls callback(h, watcher, msg, args)
    assert out["watcher"] is True and out["arg"] == 7
    assert out["payload"] == "ok"
    # binding: Message.decode() returns (type, topic, payload_str)
    assert out["decode"] == [constants.FLUX_MSGTYPE_REQUEST, "probe.msg", '{"a":1}']
    # binding: Message.payload is json.loads(payload_str) on every access
    assert out["fresh"] is True


def test_payload_of_a_message_without_one_raises_type_error(probe):
    # binding: Message.payload is json.loads(self.payload_str), and
    # json.loads(None) raises TypeError
    out = probe.rpc("probe.msg", None, module="probe")
    assert out["payload"] == ["TypeError", None]
    assert out["decode"] == [constants.FLUX_MSGTYPE_REQUEST, "probe.msg", None]


def test_future_rules(probe):
    out = probe.rpc("probe.futures", {}, module="probe")
    # binding: Future.then() raises ValueError("Callback cannot be None")
    assert out["then_none"] == ["ValueError", None]
    # binding: then() while the future is in _THEN_HANDLES -> OSError EEXIST
    assert out["then_twice"] == ["FileExistsError", errno.EEXIST]
    # binding: RPC.get() is json.loads(get_str()), a new object each call
    assert out["rpc_fresh"] is True
    # binding: FutureExt.fulfill() stores json.dumps(result); get() loads it
    assert out["ext"] == {"t": [1, 2], "3": "x"}
    assert out["ext_set"] == ["TypeError", None]
    # binding: MessageWatcher raises TypeError for a topic that is not
    # str, bytes or None
    assert out["bad_glob"] == errno.EINVAL  # TypeError(errno.EINVAL, text)
    probe.run_for(1.0)
    # binding: stop() sets Future.stopped, which then() never clears, so
    # continuation_callback skips the callback
    assert probe.rpc("probe.report", {}, module="probe") == {"stopped_calls": 0}


def test_decode_of_an_error_response_raises():
    # binding: flux_response_decode() fails with the response's errnum
    msg = Message.create(constants.FLUX_MSGTYPE_RESPONSE, "x.y")
    msg.errnum = errno.ENOENT
    with pytest.raises(FileNotFoundError):
        msg.decode()
    ok = Message.create(constants.FLUX_MSGTYPE_RESPONSE, "x.y", {"v": 1})
    assert ok.decode() == (constants.FLUX_MSGTYPE_RESPONSE, "x.y", '{"v":1}')


class _RecordingHandle:
    def __init__(self):
        self.sent = []

    def _send_request(self, future, topic, payload, nodeid, flags):
        self.sent.append((topic, payload, nodeid, flags))


def test_rpc_argument_rules():
    from mock_broker.flux_substitute.rpc import RPC

    h = _RecordingHandle()
    RPC(h, b"a.b", {"x": 1}, nodeid=constants.FLUX_NODEID_UPSTREAM)
    assert h.sent == [("a.b", {"x": 1}, constants.FLUX_NODEID_UPSTREAM, 0)]
    # binding: flux.util.encode_topic() raises OSError(EINVAL) for None and
    # TypeError(EINVAL, ...) for anything but str or bytes
    with pytest.raises(OSError) as err:
        RPC(h, None)
    assert err.value.errno == errno.EINVAL
    with pytest.raises(TypeError):
        RPC(h, 42)
    # binding: flux_rpc() takes nodeid as uint32_t and flags as int (cffi)
    with pytest.raises(OverflowError):
        RPC(h, "a.b", nodeid=-1)
    with pytest.raises(TypeError):
        RPC(h, "a.b", nodeid=1.0)
    with pytest.raises(TypeError):
        RPC(h, "a.b", flags="streaming")
    assert len(h.sent) == 1


def test_a_delivered_copy_carries_every_field_but_the_decoded_payload():
    msg = Message.create(
        constants.FLUX_MSGTYPE_RESPONSE, "sched.alloc", {"id": 1}, 7, "broker", 2
    )
    # A distinct value in every slot, so a slot the copy forgets shows.
    for i, name in enumerate(Message.__slots__):
        if name not in ("_payload", "_module_side"):
            setattr(msg, name, f"value-{i}")
    msg._payload = {"cached": True}
    copy = msg._delivered_copy()
    for name in Message.__slots__:
        if name not in ("_payload", "_module_side"):
            assert getattr(copy, name) == getattr(msg, name), name
    assert copy._payload is None and copy._module_side is True
    assert msg._module_side is False


def test_error_string_says_what_get_would_raise():
    from mock_broker.flux_substitute.future import Future

    # binding: flux_future_error_string() gives the error's text, or
    # flux_strerror() of its errnum when it has none; NULL on success
    ok, texted, bare = Future(), Future(), Future()
    ok.fulfill({"v": 1})
    texted.fulfill_error(errno.ENOSPC, "kvs full")
    bare.fulfill_error(errno.ENOSPC)
    assert ok.error_string() is None
    assert texted.error_string() == "kvs full"
    assert bare.error_string() == os.strerror(errno.ENOSPC)
    with pytest.raises(OSError):
        bare.get()
