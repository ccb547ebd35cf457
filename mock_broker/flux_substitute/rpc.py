"""Stands in for ``flux.rpc``: a request and the future of its response."""

from __future__ import annotations

import errno
import json

from mock_broker.flux_substitute import constants
from mock_broker.flux_substitute._binding import c_int, c_uint
from mock_broker.flux_substitute.future import Future


class RPC(Future):
    """Send *topic* with *payload* and wait for the response(s).

    ``get()`` returns the decoded JSON payload (or None for an empty one);
    an error response raises :class:`OSError` with its errno.

    As in flux-python, a None *topic* raises :class:`OSError` ``EINVAL`` and
    a topic that is not a string or bytes :class:`TypeError`; *nodeid* must
    fit a C ``uint32_t`` and *flags* an ``int`` (else TypeError or
    OverflowError, from cffi).
    """

    def __init__(
        self,
        flux_handle,
        topic,
        payload=None,
        nodeid=constants.FLUX_NODEID_ANY,
        flags=0,
    ):
        # flux.util.encode_topic()
        if topic is None:
            raise OSError(errno.EINVAL, "Topic must not be None/NULL")
        if isinstance(topic, bytes):
            topic = topic.decode("utf-8", errors="surrogateescape")
        elif not isinstance(topic, str):
            raise TypeError(errno.EINVAL, f"Topic must be a string, not {type(topic)}")
        nodeid = c_uint(nodeid)
        flags = c_int(flags)
        super().__init__(flux_handle)
        self.topic = topic
        self.flags = flags
        flux_handle._send_request(self, topic, payload, nodeid, flags)

    def get_str(self):
        """Return the raw JSON text of the current response."""
        msg = self._result()
        return None if msg is None else msg.payload_str

    def get(self):
        """Return the response payload decoded anew (as flux-python does, so
        each call gives a fresh object), or None if it has none."""
        text = self.get_str()
        return None if text is None else json.loads(text)
