"""Stands in for ``flux.message``: messages and message watchers.

A :class:`Message` carries its payload as the JSON text that would cross a
real broker (``payload_str``) and decodes it on first use, so a payload a
real broker could not carry (a ``set``, a ``float('nan')`` key...) fails at
the sender, as it would in production.
"""

from __future__ import annotations

import fnmatch
import json

from mock_broker.flux_substitute import constants
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


def encode_payload(payload) -> str | None:
    """Encode a payload as a broker would carry it: JSON text or None."""
    if payload is None:
        return None
    if isinstance(payload, bytes):
        return payload.decode()
    if isinstance(payload, str):
        return payload
    return json.dumps(payload, separators=(",", ":"), allow_nan=False)


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

    @property
    def payload(self):
        """The decoded JSON payload (dict), or None if there is none."""
        if self._payload is None and self.payload_str:
            self._payload = json.loads(self.payload_str)
        return self._payload

    @payload.setter
    def payload(self, value):
        self.payload_str = encode_payload(value)
        self._payload = None

    @property
    def type_str(self) -> str:
        return msg_typestr(self.type)

    def decode(self):
        """Return ``(topic, payload_str)``."""
        return self.topic, self.payload_str

    def __repr__(self) -> str:
        return f"Message({self.type_str} {self.topic!r} {self.payload_str})"


class MessageWatcher(Watcher):
    """Dispatch incoming messages whose type and topic match to *callback*.

    The callback receives ``(flux_handle, type_mask, message, args)``.
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
        self.callback(self.flux_handle, self.type_mask, msg, self.args)
