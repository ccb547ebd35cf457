"""Stands in for ``flux.core.handle``: the handle a hosted module receives.

A :class:`Flux` handle exists only for a module hosted by the mock broker:
the broker passes it to ``mod_main(h, *args)``, and module code may open
more with ``flux.Flux()`` (see :mod:`mock_broker.runtime.client_link`).  It speaks to the broker
through a *link* (:class:`mock_broker.runtime.module_host.ModuleLink`), which routes
messages, owns the module's virtual-time reactor, and blocks the module in
``get()`` while the broker works.
"""

from __future__ import annotations

import errno
import itertools

from mock_broker.flux_substitute import constants
from mock_broker.flux_substitute.message import Message, MessageWatcher
from mock_broker.flux_substitute.rpc import RPC
from mock_broker.flux_substitute.watchers import (
    CheckWatcher,
    IdleWatcher,
    PrepareWatcher,
    SignalWatcher,
    TimerWatcher,
)


class Flux:
    """Broker handle for one hosted module."""

    #: Set by the mock broker's runtime: called for a handle made without a
    #: link (``flux.Flux()``), it returns the link of a new connection of
    #: the hosted module whose code asks, or None outside module code.
    connector = None

    def __init__(self, url=None, flags=0, handle=None, *, link=None):
        if link is None and Flux.connector is not None:
            link = Flux.connector()
            if link is not None:
                link.handle = self  # where the broker delivers its responses
        if link is None:
            raise OSError(
                errno.ENOSYS,
                "no Flux broker to connect to: under flux-schedkit's substitute "
                "a handle exists only for a module hosted by the mock broker",
            )
        self._link = link
        self._reactor = link.reactor
        self._reactor.on_message = self._dispatch
        self._matchtags = itertools.count(1)
        self._rpcs: dict[int, RPC] = {}
        self._active_watchers: set = set()
        self.aux: dict[str, object] = {"flux::name": link.name}

    # -- "native" pointers and entry points used via _flux._core.lib ------

    @property
    def handle(self):
        """The native handle pointer: the handle itself."""
        return self

    def aux_get(self, key: str):
        return self.aux.get(key)

    def aux_set(self, key: str, value) -> None:
        self.aux[key] = value

    def module_set_running(self) -> int:
        self._link.set_running()
        return 0

    def module_debug_test(self, flag: int, clear: bool) -> bool:
        return self._link.debug_test(flag, clear)

    def respond_error_raw(self, msg: Message, errnum: int, errstr) -> int:
        self.respond_error(msg, errnum, errstr)
        return 0

    # -- messages ---------------------------------------------------------

    def log(self, level: int, fstring: str) -> None:
        self._link.log(level, fstring)

    def send(self, message: Message, flags: int = 0) -> None:
        message.sender = self._link.name
        self._link.send(message)

    def rpc(self, topic, payload=None, nodeid=constants.FLUX_NODEID_ANY, flags=0):
        """Send a request; return an :class:`~flux.rpc.RPC` future."""
        return RPC(self, topic, payload, nodeid, flags)

    def _send_request(self, future, topic, payload, nodeid, flags) -> None:
        wants_response = not flags & constants.FLUX_RPC_NORESPONSE
        matchtag = next(self._matchtags) if wants_response else 0
        msg = Message.create(
            constants.FLUX_MSGTYPE_REQUEST,
            topic,
            payload,
            matchtag=matchtag,
            sender=self._link.name,
            flags=flags,
        )
        msg.nodeid = nodeid
        if wants_response:
            self._rpcs[matchtag] = future
        self._link.send(msg)

    def respond(self, message: Message, payload=None) -> None:
        """Respond to request *message* with *payload* (dict, str or None)."""
        self._respond(message, payload, 0, None)

    def respond_error(self, message: Message, errnum: int, errstr=None) -> None:
        """Respond to request *message* with an error."""
        self._respond(message, None, errnum, errstr)

    def _respond(self, message, payload, errnum, errstr) -> None:
        if message.flags & constants.FLUX_RPC_NORESPONSE:
            return
        response = Message.create(
            constants.FLUX_MSGTYPE_RESPONSE,
            message.topic,
            payload,
            matchtag=message.matchtag,
            sender=self._link.name,
        )
        response.errnum = errnum
        response.errstr = errstr
        response.request = message
        self._link.send(response)

    def event_subscribe(self, topic) -> int:
        self._link.subscribe(topic)
        return 0

    def event_unsubscribe(self, topic) -> int:
        self._link.unsubscribe(topic)
        return 0

    def event_send(self, topic, payload=None) -> None:
        self.send(Message.create(constants.FLUX_MSGTYPE_EVENT, topic, payload))

    def deliver(self, msg: Message) -> None:
        """Called by the broker: a message arrives for this module."""
        if msg.type == constants.FLUX_MSGTYPE_RESPONSE:
            future = self._rpcs.get(msg.matchtag)
            if future is None:
                return  # a late response nobody waits for is dropped
            if msg.errnum:
                del self._rpcs[msg.matchtag]
                future.fulfill_error(msg.errnum, msg.errstr)
                return
            if not future.flags & constants.FLUX_RPC_STREAMING:
                del self._rpcs[msg.matchtag]
            future.fulfill(msg)
        else:
            self._reactor.post_message(msg)

    def _dispatch(self, msg: Message) -> None:
        watcher = self._reactor.match_msg_watcher(msg)
        if watcher is not None:
            watcher.dispatch(msg)
        elif msg.type == constants.FLUX_MSGTYPE_REQUEST:
            self.respond_error(msg, errno.ENOSYS, f"{msg.topic}: no handler")

    def _wait_until(self, predicate, future) -> None:
        self._link.wait(predicate, getattr(future, "topic", "a future"))

    # -- watchers -----------------------------------------------------------

    def add_watcher(self, watcher):
        self._active_watchers.add(watcher)
        return watcher

    def del_watcher(self, watcher):
        self._active_watchers.discard(watcher)

    def msg_watcher_create(
        self,
        callback,
        type_mask=constants.FLUX_MSGTYPE_ANY,
        topic_glob="*",
        args=None,
        match_tag=0,
        rolemask=None,
    ):
        return MessageWatcher(
            self, type_mask, callback, topic_glob, match_tag, rolemask, args
        )

    def timer_watcher_create(self, after, callback, repeat=0.0, args=None):
        return TimerWatcher(self, after, callback, repeat=repeat, args=args)

    def prepare_watcher_create(self, callback, args=None):
        return PrepareWatcher(self, callback, args)

    def check_watcher_create(self, callback, args=None):
        return CheckWatcher(self, callback, args)

    def idle_watcher_create(self, callback=None, args=None):
        return IdleWatcher(self, callback, args)

    def signal_watcher_create(self, signum, callback, args=None):
        """A watcher for signal *signum* that never fires: the mock broker
        sends modules no signals (see
        :class:`~mock_broker.flux_substitute.watchers.SignalWatcher`)."""
        return SignalWatcher(self, signum, callback, args)

    # -- broker attributes and configuration --------------------------------

    def get_rank(self) -> int:
        return int(self._link.attrs.get("rank", 0))

    def attr_get(self, attr_name: str) -> str:
        try:
            return str(self._link.attrs[attr_name])
        except KeyError:
            raise OSError(errno.ENOENT, f"no broker attribute {attr_name!r}") from None

    def conf_get(self, key=None, default=None, update=False):
        """Look up a dotted *key* in the instance configuration."""
        value = self._link.config
        if key is None:
            return value
        for part in key.split("."):
            if not isinstance(value, dict) or part not in value:
                return default
            value = value[part]
        return value

    # -- reactor ------------------------------------------------------------

    def reactor_run(self, reactor=None, flags=0) -> int:
        """Run the module's reactor until stopped; see ModuleLink.run_reactor."""
        return self._link.run_reactor()

    def reactor_stop(self, reactor=None) -> None:
        self._reactor.stop()

    def reactor_stop_error(self, reactor=None) -> None:
        self._reactor.stop(error=True)

    def service_register(self, name):
        return self.rpc("service.add", {"service": name})

    def service_unregister(self, name):
        return self.rpc("service.remove", {"service": name})

    def close(self) -> None:
        """Nothing to release: the broker owns the module's resources."""
