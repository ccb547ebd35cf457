"""Stands in for ``flux.message``: messages and message watchers.

A :class:`Message` carries its payload as the JSON text that would cross a
real broker (``payload_str``) and decodes it on first use, so a payload a
real broker could not carry fails at the sender.  For a value ``json.dumps``
refuses (a ``set``...) flux-python fails there too; a ``float('nan')`` it
would send as ``NaN``, which the receiving service then refuses (EPROTO).

A message handed to a module's :class:`MessageWatcher` callback is, as in
flux-python, a fresh :class:`Message` object over the delivered message,
and behaves as flux-python's does: its ``payload`` is decoded anew on each
access (mutating the returned dict changes nothing) and raises
:class:`TypeError` when the message has no payload, as ``json.loads(None)``
does.  The broker's own view of a message keeps returning None instead.
"""

from __future__ import annotations

import errno
import fnmatch
import json
import json.encoder
import math

from mock_broker.flux_substitute import constants
from mock_broker.flux_substitute._binding import errno_error
from mock_broker.flux_substitute.watchers import Watcher

_TYPE_NAMES = {
    constants.FLUX_MSGTYPE_REQUEST: "request",
    constants.FLUX_MSGTYPE_RESPONSE: "response",
    constants.FLUX_MSGTYPE_EVENT: "event",
    constants.FLUX_MSGTYPE_CONTROL: "control",
}


def msg_typestr(msg_type: int) -> str:
    """Return the name of a message type ("request", "response", ...)."""
    return _TYPE_NAMES.get(msg_type, "unknown")


#: One encoder for every message: ``json.dumps`` with arguments builds a
#: new encoder per call, a measurable share of a replay's time.
COMPACT_JSON = json.JSONEncoder(separators=(",", ":"), allow_nan=False)

# ``COMPACT_JSON.encode`` still builds its C encoder (and a markers dict
# for circular references) on every call: a third of the cost of a small
# payload.  This one is built once, without markers (a reused markers dict
# would keep the ids of a failed call).
_C_ENCODER = (
    json.encoder.c_make_encoder(
        None,
        COMPACT_JSON.default,
        json.encoder.encode_basestring_ascii,
        None,
        ":",
        ",",
        False,
        False,
        False,
    )
    if json.encoder.c_make_encoder is not None
    else None
)


def compact_json(value) -> str:
    """``COMPACT_JSON.encode(value)``: the same text and the same errors,
    with less work per call."""
    if _C_ENCODER is None:  # pragma: no cover - a Python without _json
        return COMPACT_JSON.encode(value)
    try:
        return "".join(_C_ENCODER(value, 0))
    except RecursionError:
        # Circular or too deep: the stock encoder, with its markers, says which.
        return COMPACT_JSON.encode(value)


def encode_payload(payload) -> str | None:
    """Encode a payload as a broker would carry it: JSON text or None."""
    if payload is None:
        return None
    if isinstance(payload, bytes):
        return payload.decode()
    if isinstance(payload, str):
        return payload
    return compact_json(payload)


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def _int64(text: str) -> int:
    value = int(text)
    if not -(2**63) <= value < 2**63:
        raise ValueError(f"integer of {len(text)} digits is too big (int64)")
    return value


def _finite(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueError("real number overflow")
    return value


# The hooks cost a call per number (a payload holds a few); a regular
# expression sparing them to text without long numbers cost twice as much.
_CAREFUL_JSON = json.JSONDecoder(
    parse_constant=_refuse_constant, parse_int=_int64, parse_float=_finite
)


def decode_payload(text: str):
    """Decode payload text as flux-core does (jansson's ``json_loads``), for
    the broker's side of a message.

    Python's ``json`` reads more than jansson: ``NaN`` and ``Infinity``,
    integers of any size, ``1e400`` as infinity, a bare number or string,
    nesting of any depth (up to Python's recursion limit).
    jansson refuses each of these, so a payload a module wrote that way
    fails ``flux_msg_unpack()`` in flux-core: here it raises
    :class:`ValueError` (a ``json.JSONDecodeError`` for plain syntax errors).
    """
    try:
        value = _CAREFUL_JSON.decode(text)
    except RecursionError:
        # jansson stops at 2048 levels (JSON_PARSER_MAX_DEPTH), Python's
        # decoder near its recursion limit: too deep either way
        raise ValueError("maximum parsing depth reached") from None
    if not isinstance(value, (dict, list)):
        raise ValueError("'[' or '{' expected: a payload is an object or an array")
    return value


class Message:
    """One RFC 3 message: request, response or event."""

    __slots__ = (
        "type",
        "topic",
        "payload_str",
        "_payload",
        "matchtag",
        "errnum",
        "errstr",
        "userid",
        "rolemask",
        "nodeid",
        "flags",
        "sender",
        "request",
        "_module_side",
    )

    def __init__(self, type_id=constants.FLUX_MSGTYPE_REQUEST, handle=None):
        self.type = type_id
        self.topic = ""
        self.payload_str = None
        self._payload = None
        self.matchtag = 0
        self.errnum = 0
        self.errstr = None
        self.userid = 0
        self.rolemask = constants.FLUX_ROLE_OWNER
        self.nodeid = constants.FLUX_NODEID_ANY
        self.flags = 0
        #: Name of the endpoint that sent the message ("broker" or a module).
        self.sender = ""
        #: For a response: the request it answers.
        self.request = None
        # True for the object a module's message handler receives
        self._module_side = False

    @classmethod
    def create(
        cls, type_id, topic, payload=None, matchtag=0, sender="", flags=0
    ) -> Message:
        """Build a message with its payload encoded."""
        msg = cls(type_id)
        msg.topic = topic
        msg.payload_str = encode_payload(payload)
        msg.matchtag = matchtag
        msg.sender = sender
        msg.flags = flags
        return msg

    @classmethod
    def from_event_encode(cls, topic, payload=None) -> Message:
        return cls.create(constants.FLUX_MSGTYPE_EVENT, topic, payload)

    @property
    def handle(self):
        """The "native" message pointer: the message itself."""
        return self

    def _delivered_copy(self) -> Message:
        """The object a module's message handler receives for this message."""
        copy = Message.__new__(Message)
        # Spelled out: a loop over __slots__ with getattr/setattr costs a
        # few percent of a replay (one copy per delivered message).
        copy.type = self.type
        copy.topic = self.topic
        copy.payload_str = self.payload_str
        copy._payload = None
        copy.matchtag = self.matchtag
        copy.errnum = self.errnum
        copy.errstr = self.errstr
        copy.userid = self.userid
        copy.rolemask = self.rolemask
        copy.nodeid = self.nodeid
        copy.flags = self.flags
        copy.sender = self.sender
        copy.request = self.request
        copy._module_side = True
        return copy

    @property
    def payload(self):
        """The decoded JSON payload.

        In a module's message handler this is ``json.loads(payload_str)``
        on every access, as in flux-python, so a message without payload
        raises :class:`TypeError`.  Elsewhere (the broker's side) it is
        decoded as flux-core would (:func:`decode_payload`, which raises
        :class:`ValueError` for what jansson refuses), the decoded payload
        is cached and None stands for no payload.
        """
        if self._module_side:
            return json.loads(self.payload_str)
        if self._payload is None and self.payload_str:
            self._payload = decode_payload(self.payload_str)
        return self._payload

    @payload.setter
    def payload(self, value):
        self.payload_str = encode_payload(value)
        self._payload = None

    @property
    def type_str(self) -> str:
        return msg_typestr(self.type)

    def decode(self):
        """Return ``(type, topic, payload_str)``, as flux-python does.

        An error response raises :class:`OSError` with its errno (libflux's
        ``flux_response_decode()`` fails with it).
        """
        if self.type == constants.FLUX_MSGTYPE_RESPONSE and self.errnum:
            raise errno_error(self.errnum)
        return self.type, self.topic, self.payload_str

    def __repr__(self) -> str:
        return f"Message({self.type_str} {self.topic!r} {self.payload_str})"


class MessageWatcher(Watcher):
    """Dispatch incoming messages whose type and topic match to *callback*.

    The callback receives ``(flux_handle, watcher, message, args)``, the
    watcher being this object, as in flux-python.  *topic_glob* must be a
    string, bytes or None (None matches any topic); anything else raises
    :class:`TypeError`.
    """

    def __init__(
        self,
        flux_handle,
        type_mask,
        callback,
        topic_glob="*",
        match_tag=0,
        rolemask=None,
        args=None,
    ):
        if topic_glob is None:
            topic_glob = "*"
        elif isinstance(topic_glob, bytes):
            topic_glob = topic_glob.decode("utf-8")
        elif not isinstance(topic_glob, str):
            # flux-python raises TypeError(errno.EINVAL, message) here
            raise TypeError(
                errno.EINVAL, f"Topic must be a string, not {type(topic_glob)}"
            )
        self.type_mask = type_mask
        self.callback = callback
        self.topic_glob = topic_glob
        self.args = args
        self.rolemask = rolemask
        super().__init__(flux_handle)

    def matches(self, msg: Message) -> bool:
        if not msg.type & self.type_mask:
            return False
        if self.topic_glob in ("*", msg.topic):
            return True
        return fnmatch.fnmatchcase(msg.topic, self.topic_glob)

    def start(self):
        self._active = True
        self._reactor.add_msg_watcher(self)
        return self

    def stop(self):
        self._active = False
        self._reactor.remove_msg_watcher(self)
        return self

    def dispatch(self, msg: Message) -> None:
        self.callback(self.flux_handle, self, msg._delivered_copy(), self.args)
