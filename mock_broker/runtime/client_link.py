"""A connection a hosted module opens itself: ``flux.Flux()`` in module code.

In flux-core 0.88 a module's process can connect to its broker again (the
broker's URI is in its environment), and a scheduler, or a library it
calls, may do so to make a request of its own.  Here ``flux.Flux()``
called by module code (see :mod:`mock_broker.runtime.module_process`)
gives a handle on a :class:`ClientLink` of that module: its requests reach
the broker's services as the module's (the transcript names the module),
and their responses come back to this handle, not the module's.

As a second handle in a real instance, it has a reactor of its own that
nothing runs for it: ``get()`` on its futures waits while the broker
works, as the module's own handle does; a ``then()`` callback on one runs
only in ``reactor_run()`` of that handle, which the mock broker does not
give (it raises ENOSYS, naming the call).
"""

from __future__ import annotations

import errno
from collections.abc import Callable
from typing import Any

from mock_broker.runtime.reactor import Reactor


class HandleLink:
    """What a handle speaks to the broker through: the part of a link the
    module's own handle (:class:`~mock_broker.runtime.module_host.
    ModuleLink`) and a second one (:class:`ClientLink`) share."""

    broker: Any
    subscriptions: set[str]

    def send(self, msg) -> None:
        self.broker.route_from_module(self, msg)

    def wait(self, predicate: Callable[[], bool], what: str) -> None:
        self.broker.block_module_until(self, predicate, what)

    def subscribe(self, topic: str) -> None:
        self.subscriptions.add(topic)

    def unsubscribe(self, topic: str) -> None:
        self.subscriptions.discard(topic)


class ClientLink(HandleLink):
    """What a second handle of module *owner* speaks to the broker through."""

    def __init__(self, owner: Any) -> None:
        self.owner = owner
        self.broker = owner.broker
        self.spec = owner.spec
        self.name = owner.name
        self.attrs = owner.attrs
        self.config = owner.config
        self.reactor = Reactor(owner.broker.clock)
        self.services: set[str] = set()
        self.subscriptions: set[str] = set()
        #: The handle on this link (set by the handle itself).
        self.handle = None

    def log(self, level: int, text: str) -> None:
        self.owner.log(level, text)

    def set_running(self) -> None:
        pass  # the module's own handle reports it running

    def debug_test(self, flag: int, clear: bool) -> bool:
        return self.owner.debug_test(flag, clear)

    def run_reactor(self) -> int:
        raise OSError(
            errno.ENOSYS,
            "reactor_run() of a second handle the module opened with flux.Flux(): "
            "the mock broker runs only the reactor of the handle mod_main was "
            "given (a second handle answers get() on its futures)",
        )
