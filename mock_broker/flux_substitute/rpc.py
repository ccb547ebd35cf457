"""Stands in for ``flux.rpc``: a request and the future of its response."""

from __future__ import annotations

from mock_broker.flux_substitute import constants
from mock_broker.flux_substitute.future import Future


class RPC(Future):
    """Send *topic* with *payload* and wait for the response(s).

    ``get()`` returns the decoded JSON payload (or None for an empty one);
    an error response raises :class:`OSError` with its errno.
    """

    def __init__(
        self,
        flux_handle,
        topic,
        payload=None,
        nodeid=constants.FLUX_NODEID_ANY,
        flags=0,
    ):
        super().__init__(flux_handle)
        self.topic = topic
        self.flags = flags
        flux_handle._send_request(self, topic, payload, nodeid, flags)

    def get_str(self):
        """Return the raw JSON text of the current response."""
        msg = self._result()
        return None if msg is None else msg.payload_str

    def get(self):
        msg = self._result()
        return None if msg is None else msg.payload
