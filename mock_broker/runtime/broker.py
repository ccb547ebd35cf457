"""The mock broker: virtual clock, message routing, services and modules.

:class:`MockBroker` hosts Python broker modules (normally one scheduler)
next to a model of flux-core's job-manager (:mod:`mock_broker.jobmanager.job_manager`),
resource module (:mod:`mock_broker.services.resource`) and KVS
(:mod:`mock_broker.services.kvs`).  Every message is recorded in the
:class:`~mock_broker.runtime.transcript.Transcript`; a judge (the
conformance kit's referee) may watch through
:meth:`MockBroker.attach_observer`.

The event loop follows the mock-clock idea: work that is ready at the
current virtual time runs first (broker events, then the job-manager's
outgoing requests, then one iteration of each module reactor with work);
only when nothing is ready does the clock jump to the next timer or
scripted event.
"""

from __future__ import annotations

import contextlib
import errno
import gc
import heapq
import itertools
import random
import syslog
from collections.abc import Callable, Iterable

from mock_broker import flux_substitute

flux_substitute.install()

from flux.message import Message  # noqa: E402  (needs the substitute)

from mock_broker.flux_substitute import constants  # noqa: E402
from mock_broker.jobmanager.job_manager import JobManager  # noqa: E402
from mock_broker.machine import Machine  # noqa: E402
from mock_broker.runtime.attributes import broker_attributes  # noqa: E402
from mock_broker.runtime.clock import EPOCH, VirtualClock  # noqa: E402
from mock_broker.runtime.module_host import (  # noqa: E402
    ModuleLink,
    ModuleLoadError,
    ran_here,
    rerun_hint,
    resolve,
    where_called,
)
from mock_broker.runtime.observer import BrokerObserver  # noqa: E402
from mock_broker.runtime.transcript import Later, Transcript  # noqa: E402
from mock_broker.services.job_info import JobInfoService  # noqa: E402
from mock_broker.services.kvs import KVSError, KVSService  # noqa: E402
from mock_broker.services.resource import ResourceService  # noqa: E402

_LEVEL_NAMES = {
    syslog.LOG_EMERG: "emerg",
    syslog.LOG_ALERT: "alert",
    syslog.LOG_CRIT: "crit",
    syslog.LOG_ERR: "err",
    syslog.LOG_WARNING: "warning",
    syslog.LOG_NOTICE: "notice",
    syslog.LOG_INFO: "info",
    syslog.LOG_DEBUG: "debug",
}

#: How far past the last event ``run()`` may go before it gives up (virtual s).
DEFAULT_RUN_LIMIT = 10 * 365 * 86400.0
#: Rounds of a module's timers, each sending the broker a message after the
#: instance's own work is done, before :meth:`MockBroker.run_until_settled`
#: calls the module unsettled.
UNSETTLED_ROUNDS = 1000

#: The cyclic collector's first-generation threshold while the broker runs.
GC_THRESHOLD = 10_000


class BrokerStalled(RuntimeError):
    """A run limit was reached while work was still scheduled."""


class BrokerLivelock(BrokerStalled):
    """More than ``max_messages_per_instant`` messages came from modules,
    or more than ``max_iterations_per_instant`` reactor iterations of one
    module ran, without the virtual clock moving: the modules and the
    broker answer each other forever at one instant, or a module keeps its
    reactor busy (a pass that yields without end) and time never comes."""


class BrokerUnsettled(BrokerStalled):
    """:meth:`MockBroker.run_until_settled` reached its limit while a
    module's timers kept sending the broker messages: the module, not the
    instance's own work, keeps the run from settling.

    Attributes:
        module: the module that sent the last such message.
        sent: what it sent (``TOPIC request``, ``TOPIC response``, ...).
        where: ``FILE:LINE in FUNCTION`` of the module's own code that
            sent it, or ``""`` when no frame of its file was on the stack.
        since: when the instance's own work ran out (virtual s, elapsed).
        times: how many times a quiet wait was broken since then.
    """

    def __init__(self, text: str, module: str, sent: str, where: str, since, times):
        super().__init__(text)
        self.module, self.sent, self.where = module, sent, where
        self.since, self.times = since, times


_KINDS = {
    constants.FLUX_MSGTYPE_REQUEST: "request",
    constants.FLUX_MSGTYPE_RESPONSE: "response",
    constants.FLUX_MSGTYPE_EVENT: "event",
}


def _unpack_problem(msg: Message) -> str | None:
    """Why a request's payload is not the JSON object the broker's services
    unpack (flux-core answers such a request EPROTO), or None."""
    if msg.payload_str is None:
        return None
    try:
        payload = msg.payload
    except ValueError as exc:
        return f"{msg.topic}: payload is not JSON flux-core reads: {exc}"
    if payload is not None and not isinstance(payload, dict):
        return f"{msg.topic}: payload is not a JSON object"
    return None


class MockBroker:
    """A deterministic, virtual-time Flux broker for one instance.

    Args:
        machine: the cluster (default: 4 nodes x 4 cores).
        seed: seeds the ``random`` module for hosted code and the broker.
        epoch: virtual wall-clock time at start.
        default_runtime: runtime of jobs submitted without one and without a
            duration (virtual seconds).
        release_after: if set, jobs release their ranks one at a time after
            they end, this many virtual seconds apart, as flux-core's
            housekeeping does with ``release-after``; None releases
            everything in one ``sched.free``.
        config: instance configuration returned by ``h.conf_get()``.
    """

    def __init__(
        self,
        machine: Machine | None = None,
        *,
        seed: int = 0,
        epoch: float = EPOCH,
        default_runtime: float = 60.0,
        release_after: float | None = None,
        config: dict | None = None,
    ):
        self.clock = VirtualClock(epoch)
        self.seed = seed
        random.seed(seed)
        self.random = random.Random(seed)
        self.config = dict(config or {})
        self.transcript = Transcript(self.clock)
        self.kvs = KVSService()
        self.machine = machine or Machine.uniform(4, 4)
        #: What ``h.attr_get()`` reads (see :mod:`mock_broker.runtime.attributes`).
        self.attributes = broker_attributes(seed, epoch, self.machine.hostname(0))
        self.resources = ResourceService(self, self.machine)
        self.jobs = JobManager(
            self, default_runtime=default_runtime, release_after=release_after
        )
        self.job_info = JobInfoService(self.kvs, lambda jobid: jobid in self.jobs.jobs)
        #: Who watches the run (see :mod:`mock_broker.runtime.observer`).
        self.observer: BrokerObserver = BrokerObserver(self)
        self.modules: dict[str, ModuleLink] = {}
        self.services: dict[str, ModuleLink] = {}
        self.logs: list[tuple[float, str, str, str]] = []
        #: Stop with :class:`BrokerLivelock` after this many messages from
        #: modules at one virtual instant (None: no limit).
        self.max_messages_per_instant: int | None = None
        self._instant = (self.clock.now, 0)
        #: Stop with :class:`BrokerLivelock` after this many reactor
        #: iterations of one module at one virtual instant (None: no
        #: limit): a pass that yields without end, or a timer that is due
        #: again at once, keeps the clock from moving without a message.
        self.max_iterations_per_instant: int | None = None
        self._iterations: dict[str, tuple[float, int]] = {}
        #: The traceback of the last module that exited with an error.
        self.last_exit_traceback = ""
        #: Why it exited, with the module's file and line where it raised.
        self.last_exit_detail = ""
        self._last_scheduler: tuple[str, str, list[str]] | None = None
        # While run_until_settled waits out the modules' timers: the first
        # message a module sent meanwhile (module, what, where, elapsed).
        self._quiet_watch: list[tuple[str, str, str, float]] | None = None
        self._events: list[tuple[float, int, Callable[[], None]]] = []
        self._at_instant_end: list[Callable[[], None]] = []
        self._seq = itertools.count()
        self._matchtags = itertools.count(1)
        self._waiting: dict[int, Callable[[Message], None]] = {}
        self._handlers = {
            "service.add": self._service_add,
            "service.remove": self._service_remove,
            "resource.acquire": self._resource_acquire,
            "resource.status": self._resource_status,
            "kvs.commit": self._kvs_commit,
            "kvs.lookup": self._kvs_lookup,
            "job-info.lookup": self._job_info_lookup,
            "job-manager.sched-hello": self.jobs.hello,
            "job-manager.sched-ready": self.jobs.ready,
            "job-manager.raise": self.jobs.raise_request,
        }
        self._response_topics = {"sched.alloc": self.jobs.alloc_response}

    def attach_observer(self, observer: BrokerObserver) -> BrokerObserver:
        """Let *observer* watch this broker from now on; return it."""
        self.observer = observer
        return observer

    # -- time ----------------------------------------------------------------

    @property
    def now(self) -> float:
        """Current virtual wall-clock time (seconds since the Unix epoch)."""
        return self.clock.now

    @property
    def elapsed(self) -> float:
        """Virtual seconds since the broker started."""
        return self.clock.elapsed

    def at(self, when: float, fn: Callable[[], None]) -> None:
        """Run *fn* on the broker at virtual time *when* (absolute)."""
        heapq.heappush(self._events, (max(when, self.now), next(self._seq), fn))

    def at_instant_end(self, fn: Callable[[], None]) -> None:
        """Run *fn* at the current virtual time, once nothing else is left
        to do at it: the events due delivered and every module's reactor
        idle (a scheduling pass under way at this instant has ended).

        For what the scheduler's own work causes at the instant it does it
        (a job that runs for no time ends as it starts): in the textbook
        definitions a decision at an instant is whole, and in a real
        instance such an end comes after the pass, which takes no time
        here."""
        self._at_instant_end.append(fn)

    def after(self, delay: float, fn: Callable[[], None]) -> None:
        """Run *fn* on the broker *delay* virtual seconds from now."""
        self.at(self.now + delay, fn)

    # -- modules ---------------------------------------------------------------

    def load(
        self, scheduler: str, args: Iterable[str] = (), name: str | None = None
    ) -> ModuleLink:
        """Load a module as ``flux module load`` would and start it.

        Returns once the module has entered its reactor.  Raises
        :class:`~mock_broker.runtime.module_host.ModuleLoadError` if it could not
        be imported or exited before reporting itself running.
        """
        spec = resolve(scheduler, name)
        if spec.name in self.modules:
            spec.process.close()  # no load follows its import
            raise ModuleLoadError(f"{spec.name}: module is already loaded")
        link = ModuleLink(self, spec, list(args))
        self.modules[spec.name] = link
        self._last_scheduler = (spec.source, spec.name, list(args))
        self.transcript.note("event", "broker", f"module load {spec.name} {args!r}")
        if spec.note:
            self.transcript.note("event", "broker", spec.note)
        with self.clock.active():
            link.start()
            if link.state == "exited":
                self._module_exited(link)
                if not link.running:
                    raise ModuleLoadError(
                        f"{spec.name}: {_describe(link.exit_error)}"
                        + rerun_hint(spec, link.exit_error)
                    )
        ran_here(spec)
        return link

    def unload(self, name: str | None = None) -> None:
        """Remove a module (default: the scheduler), as ``flux module remove``."""
        link = self._module(name)
        self.transcript.note("event", "broker", f"module remove {link.name}")
        with self.clock.active():
            if link.state == "reactor":
                link.reactor.stop()
                link.resume()
            if link.state != "exited":
                raise RuntimeError(f"{link.name}: did not exit when removed")
            self._module_exited(link, removed=True)

    def restart_scheduler(self, args: Iterable[str] | None = None) -> ModuleLink:
        """Unload the scheduler and load it again (hello replay follows).

        A scheduler that has exited (crashed) is loaded again the same way,
        as ``flux module reload`` would.
        """
        try:
            link = self._module(None)
        except KeyError:
            if self._last_scheduler is None:
                raise
            source, name, old_args = self._last_scheduler
            return self.load(source, old_args if args is None else list(args), name)
        source, name = link.spec.source, link.name
        args = link.args if args is None else list(args)
        if link.state != "exited":
            self.unload(name)
        elif name in self.modules:
            del self.modules[name]
        return self.load(source, args, name=name)

    @property
    def scheduler(self) -> ModuleLink | None:
        """The module that registered the ``sched`` service, if any."""
        return self.services.get("sched")

    def _module(self, name: str | None) -> ModuleLink:
        if name is None:
            link = self.scheduler or next(iter(self.modules.values()), None)
        else:
            link = self.modules.get(name)
        if link is None:
            raise KeyError(f"no module {name or '(scheduler)'} is loaded")
        return link

    def _module_exited(self, link: ModuleLink, removed: bool = False) -> None:
        """Forget *link*, which exited (*removed*: as ``flux module remove``
        asked it to)."""
        if self.modules.get(link.name) is link:
            del self.modules[link.name]
        detail = link.exit_detail()
        if link.exit_error is not None:
            self.last_exit_traceback = link.exit_trace()
            self.last_exit_detail = detail
        self.transcript.note("event", link.name, f"module exited: {detail}")
        was_scheduler = self.services.get("sched") is link
        if was_scheduler and (link.exit_error is not None or not removed):
            # Cleanly or not, a scheduler that stops by itself leaves the
            # instance without scheduling.
            how = "" if link.exit_error is not None else " (on its own: not removed)"
            self.observer.incident(
                "module-exited", f"scheduler {link.name} exited: {detail}{how}"
            )
        for service in list(link.services):
            self.services.pop(service, None)
        self.resources.forget(link)
        if was_scheduler:
            self.jobs.scheduler_disconnected(link)

    def module_log(self, link: ModuleLink, level: int, text: str) -> None:
        name = _LEVEL_NAMES.get(level, str(level))
        self.logs.append((self.elapsed, link.name, name, text))
        # The note shares the text with self.logs: a module that logs a lot
        # is not charged twice for it.
        self.transcript.note("log", link.name, Later("{}: {}", name, text))

    # -- messages ----------------------------------------------------------------

    def route_from_module(self, link: ModuleLink, msg: Message) -> None:
        watch = self._quiet_watch
        if watch is not None and not watch:
            kind = _KINDS.get(msg.type, "message")
            where = where_called(link.spec.file)
            watch.append((link.name, f"{msg.topic} {kind}", where, self.elapsed))
        now, count = self._instant
        self._instant = (
            (now, count + 1) if now == self.clock.now else (self.clock.now, 1)
        )
        if msg.type == constants.FLUX_MSGTYPE_REQUEST:
            seq = self.transcript.message(link.name, "broker", msg)
            handler = self._handlers.get(msg.topic)
            if handler is not None:
                problem = _unpack_problem(msg)
                if problem is None:
                    handler(link, msg)
                else:
                    # flux_request_unpack() fails: the service answers EPROTO
                    self.respond_error(link, msg, errno.EPROTO, problem)
            else:
                self.observer.note_seq(seq)
                self.respond_error(link, msg, errno.ENOSYS, f"{msg.topic}: no service")
        elif msg.type == constants.FLUX_MSGTYPE_RESPONSE:
            seq = self.transcript.message(link.name, "broker", msg)
            self.observer.note_seq(seq)
            handler = self._response_topics.get(msg.topic)
            if handler is not None:
                handler(link, msg)
                return
            callback = self._waiting.pop(msg.matchtag, None)
            if callback is None:
                self.observer.incident(
                    "response-unknown-request",
                    f"{link.name} responded to {msg.topic} matchtag {msg.matchtag}, "
                    "which is not an open request",
                )
            else:
                callback(msg)
        else:
            self.transcript.message(link.name, "broker", msg)

    def send_request(
        self,
        link: ModuleLink,
        topic: str,
        payload=None,
        on_response: Callable[[Message], None] | None = None,
    ) -> Message:
        """Send a request from the broker to a module."""
        if on_response is None and topic not in self._response_topics:
            matchtag, flags = 0, constants.FLUX_RPC_NORESPONSE
        else:
            matchtag, flags = next(self._matchtags), 0
        msg = Message.create(
            constants.FLUX_MSGTYPE_REQUEST, topic, payload, matchtag, "broker", flags
        )
        if on_response is not None:
            self._waiting[matchtag] = on_response
        self.transcript.message("broker", link.name, msg)
        link.handle.deliver(msg)
        return msg

    def respond(self, link: ModuleLink, request: Message, payload=None) -> None:
        """Respond to a module's request."""
        self._respond(link, request, payload, 0, None)

    def respond_error(self, link, request, errnum: int, errstr: str | None = None):
        """Respond to a module's request with an error."""
        self._respond(link, request, None, errnum, errstr)

    def _respond(self, link, request, payload, errnum, errstr) -> None:
        if request.flags & constants.FLUX_RPC_NORESPONSE:
            return
        msg = Message.create(
            constants.FLUX_MSGTYPE_RESPONSE,
            request.topic,
            payload,
            request.matchtag,
            "broker",
        )
        msg.errnum, msg.errstr = errnum, errstr
        self.transcript.message("broker", link.name, msg)
        link.handle.deliver(msg)

    def rpc(self, topic: str, payload=None, module: str | None = None, timeout=60.0):
        """Send a request to a module and run until it answers; return the
        response payload or raise OSError with its errno."""
        link = self._module(module)
        box: list[Message] = []
        self.send_request(link, topic, payload, box.append)
        self.run_until_condition(lambda: bool(box), timeout=timeout)
        if not box:
            raise TimeoutError(f"{link.name} did not answer {topic} in {timeout}s")
        if box[0].errnum:
            raise OSError(box[0].errnum, box[0].errstr or "")
        try:
            return box[0].payload
        except ValueError as exc:  # flux_rpc_get_unpack() fails with EPROTO
            raise OSError(errno.EPROTO, f"{topic} response: {exc}") from None

    def feasibility_check(self, jobspec: dict) -> str | None:
        """Ask the scheduler whether *jobspec* could ever run
        (``feasibility.check``); return None if so, else its error text."""
        try:
            self.rpc("feasibility.check", {"jobspec": jobspec})
        except OSError as exc:
            return exc.strerror or str(exc)
        return None

    def stats(self, module: str | None = None) -> dict:
        """The module's ``<name>.stats-get`` response."""
        link = self._module(module)
        return self.rpc(f"{link.name}.stats-get", module=link.name)

    # -- broker services -----------------------------------------------------------

    def _service_add(self, link, msg) -> None:
        service = (msg.payload or {}).get("service")
        owner = self.services.get(service)
        if owner is not None and owner is not link:
            self.respond_error(link, msg, errno.EEXIST, f"{service} already registered")
            return
        self.services[service] = link
        link.services.add(service)
        self.respond(link, msg)

    def _service_remove(self, link, msg) -> None:
        service = (msg.payload or {}).get("service")
        if self.services.get(service) is link:
            del self.services[service]
            link.services.discard(service)
        self.respond(link, msg)

    def _resource_acquire(self, link, msg) -> None:
        self.resources.acquire(link, msg)

    def _answer(self, link, msg, service: Callable[[], object]) -> None:
        """Respond with what *service()* returns, or with the error it
        raises as :class:`KVSError`."""
        try:
            payload = service()
        except KVSError as exc:
            self.respond_error(link, msg, exc.errnum, exc.text)
            return
        self.respond(link, msg, payload)

    def _resource_status(self, link, msg) -> None:
        self.respond(link, msg, self.resources.status())

    def _kvs_commit(self, link, msg) -> None:
        self._answer(link, msg, lambda: self.kvs.commit(msg.payload or {}) or {})

    def _kvs_lookup(self, link, msg) -> None:
        payload = msg.payload
        key = payload.get("key") if isinstance(payload, dict) else None
        if not isinstance(key, str):
            self.respond_error(link, msg, errno.EPROTO, "kvs.lookup: no key")
            return
        self._answer(link, msg, lambda: {"key": key, "value": self.kvs.lookup(key)})

    def _job_info_lookup(self, link, msg) -> None:
        self._answer(link, msg, lambda: self.job_info.lookup(msg.payload))

    # -- the loop -------------------------------------------------------------------

    @contextlib.contextmanager
    def _running(self):
        """Virtual time on, and the cyclic garbage collector's first
        threshold raised (restored after): a run allocates several
        containers per message, and at the default threshold of 700 the
        collections cost about 5% of a 20,000-job replay."""
        threshold = gc.get_threshold()
        gc.set_threshold(max(threshold[0], GC_THRESHOLD), *threshold[1:])
        try:
            with self.clock.active():
                yield
        finally:
            gc.set_threshold(*threshold)

    def _step(self, modules: bool = True) -> bool:
        """Do the work that is ready now; return False if there was none."""
        limit = self.max_messages_per_instant
        if limit is not None and self._instant[1] > limit:
            when, count = self._instant
            self._instant = (when, 0)
            raise BrokerLivelock(
                f"{count} messages from modules at t={when - self.clock.epoch:.3f} "
                f"without the clock moving (limit {limit})"
            )
        progressed = False
        now = self.clock.now
        events = self._events
        while events and events[0][0] <= now:
            heapq.heappop(events)[2]()
            progressed = True
        if self.jobs.flush():
            progressed = True
        if modules:
            for link in list(self.modules.values()):
                if link.state == "reactor" and link.reactor.busy():
                    if self.max_iterations_per_instant is not None:
                        self._count_iteration(link)
                    link.iterate()
                    progressed = True
                    if link.reactor.stop_reason is not None:
                        link.resume()
                        if link.state == "exited":
                            self._module_exited(link)
            if not progressed:
                progressed = self._instant_ends()
        return progressed

    def _count_iteration(self, link: ModuleLink) -> None:
        """Count an iteration of *link*'s reactor at this instant; raise
        :class:`BrokerLivelock` past ``max_iterations_per_instant``."""
        now = self.clock.now
        when, count = self._iterations.get(link.name, (now, 0))
        count = count + 1 if when == now else 1
        limit = self.max_iterations_per_instant  # set: the caller checks
        if count > limit:
            self._iterations.pop(link.name, None)
            raise BrokerLivelock(
                f"{limit} reactor iterations of {link.name} at "
                f"t={self.elapsed:.3f} without the clock moving (limit {limit}), "
                f"busy with {link.reactor.busy_with()}: a real broker would "
                "spin a core on it until some other event came"
            )
        self._iterations[link.name] = (now, count)

    def _instant_ends(self) -> bool:
        """Run what waits for the end of the instant (see
        :meth:`at_instant_end`); False if nothing did."""
        if not self._at_instant_end:
            return False
        ready, self._at_instant_end = self._at_instant_end, []
        for fn in ready:
            fn()
        return True

    def _next_time(self, modules: bool = True) -> float | None:
        times = [self._events[0][0]] if self._events else []
        if modules:
            for link in self.modules.values():
                if link.state == "reactor":
                    when = link.reactor.next_timer_time()
                    if when is not None:
                        times.append(when)
        return min(times) if times else None

    def _advance(self, limit: float | None) -> bool:
        """Jump the clock to the next event at or before *limit*."""
        self.observer.quiescent()
        when = self._next_time()
        if when is None or (limit is not None and when > limit):
            return False
        self.clock.advance_to(when)
        return True

    def run_until(self, when: float) -> None:
        """Run until virtual time *when* (absolute); the clock ends there."""
        with self._running():
            while True:
                if self._step():
                    continue
                if not self._advance(when):
                    self.clock.advance_to(when)
                    return

    def run_for(self, seconds: float) -> None:
        """Run for *seconds* of virtual time."""
        self.run_until(self.now + seconds)

    def run_until_quiet(self) -> None:
        """Run what is ready now, without moving the clock."""
        with self._running():
            while self._step():
                pass
            self.observer.quiescent()

    def run_steps(self, count: int) -> int:
        """Take up to *count* steps of the work ready now, without moving
        the clock (a step: the events due, then one reactor iteration of
        each busy module); return how many did something.  A scheduler in
        the middle of a pass that yields is left there: what the caller
        does next reaches it mid-pass, as events reach a real one."""
        done = 0
        with self._running():
            while done < count and self._step():
                done += 1
        return done

    def run(self, limit: float = DEFAULT_RUN_LIMIT) -> None:
        """Run until nothing is left to happen (every job done or stuck).

        Strict: any armed timer is something left to happen.  See
        :meth:`run_until_settled` for the end an operator would see.

        Raises:
            BrokerStalled: events are still scheduled *limit* virtual seconds
                from now (a module re-arming a timer forever, for example);
                the clock ends at the limit.
        """
        deadline = self.now + limit
        with self._running():
            while True:
                if self._step():
                    continue
                if not self._advance(deadline):
                    break
        if self._next_time() is not None:
            # (Whether or not the last event fell exactly on the deadline.)
            self.clock.advance_to(deadline)
            raise BrokerStalled(f"still busy after {limit} virtual seconds")

    def run_until_settled(
        self, limit: float = DEFAULT_RUN_LIMIT, max_rounds: int = UNSETTLED_ROUNDS
    ) -> None:
        """Run until the instance has settled, as a real one would be seen.

        Settled: the instance's own work is done (nothing ready, no
        scripted event or job end to come), and the modules' timers then
        armed have each fired once while no module sent the broker
        anything.  A log line is not a message: a repeating timer that only
        logs (a heartbeat line in ``flux dmesg``) leaves the run settled at
        its first firing, as it leaves a real instance idle; one whose
        firing sends a message (a pass that allocates, a KVS poll) makes
        the wait start again.  An unreferenced watcher counts as any
        other (see :meth:`~mock_broker.flux_substitute.watchers.Watcher.unref`).
        The wait is bounded: one round of the timers armed when it starts,
        even past *limit*.

        Raises:
            BrokerUnsettled: *limit* virtual seconds from now, or after
                *max_rounds* rounds of the timers each broken by a message
                once the instance's own work was done (a poll every minute
                would take a year of virtual time, and as many messages, to
                reach *limit*), a module's timers still sent messages (it
                says which and where).
            BrokerStalled: the instance's own work was still scheduled
                *limit* virtual seconds from now (a job ending later).
        """
        deadline = self.now + limit
        horizon: float | None = None  # when the quiet wait's timers have fired
        since, times = None, 0  # when the instance's own work ran out; breaks
        sent = None
        with self._running():
            try:
                while True:
                    if self._step():
                        continue
                    watch, self._quiet_watch = self._quiet_watch, None
                    if watch:
                        sent, horizon, times = watch[0], None, times + 1
                        if self.now >= deadline or times >= max_rounds:
                            break
                    if self._events:
                        horizon, since, times, sent = None, None, 0, None
                    elif horizon is None:
                        horizon = self._last_module_timer()
                        if horizon is None:
                            return  # nothing is armed: nothing will happen
                        since = self.elapsed if since is None else since
                    elif self.now >= horizon:
                        return  # every timer fired, and sent nothing
                    if horizon is not None:
                        self._quiet_watch = []
                    # (A quiet wait under way runs its round out, even
                    # past the deadline: it is bounded by its own timers.)
                    until = deadline if horizon is None else max(deadline, horizon)
                    if not self._advance(until):
                        break
            finally:
                self._quiet_watch = None
        if horizon is not None or self._next_time() is None:
            return  # a quiet wait's timers were stopped before they fired
        if times < max_rounds:
            self.clock.advance_to(deadline)
        if sent is None:
            raise BrokerStalled(f"still busy after {limit} virtual seconds")
        module, what, where, when = sent
        raise BrokerUnsettled(
            f"{module} never let the instance settle: from t={since:.3f}, when "
            f"the instance's own work was done, to t={when:.3f}, its timers "
            f"sent the broker messages {times} times (the last: {what}"
            + (f" from {where}" if where else "")
            + "); a module whose timers keep firing is settled when they send "
            "nothing but log lines",
            module,
            what,
            where,
            since,
            times,
        )

    def _last_module_timer(self) -> float | None:
        """When the latest timer armed in any module's reactor is due."""
        times = [
            when
            for link in self.modules.values()
            if link.state == "reactor"
            and (when := link.reactor.last_timer_time()) is not None
        ]
        return max(times) if times else None

    def run_until_condition(
        self, predicate: Callable[[], bool], timeout: float = DEFAULT_RUN_LIMIT
    ) -> bool:
        """Run until *predicate()* is true; return False if it never became
        true (nothing left to happen, or *timeout* virtual seconds passed)."""
        deadline = self.now + timeout
        with self._running():
            while not predicate():
                if self._step():
                    continue
                if not self._advance(deadline):
                    return predicate()
        return True

    def block_module_until(self, link, predicate, what: str) -> None:
        """A module waits in ``get()``: run the broker, not the module."""
        while not predicate():
            # (The module waits in a call, not in a pass: what waits for the
            # end of the instant comes before the clock moves on.)
            if self._step(modules=False) or self._instant_ends():
                continue
            when = self._next_time(modules=False)
            if when is None:
                raise OSError(
                    errno.EDEADLK,
                    f"{link.name} waits for {what}, which nothing in the broker "
                    "will ever answer",
                )
            self.clock.advance_to(when)

    def close(self) -> None:
        """Remove every module (their threads exit)."""
        for name in list(self.modules):
            try:
                self.unload(name)
            except RuntimeError:
                pass

    def __enter__(self) -> MockBroker:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _describe(exc: BaseException | None) -> str:
    if exc is None:
        return "exited"
    text = str(exc) or type(exc).__name__
    return (
        text
        if isinstance(exc, (OSError, ValueError))
        else f"{type(exc).__name__}: {text}"
    )
