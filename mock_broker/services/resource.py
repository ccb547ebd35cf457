"""The mock broker's resource module: ``resource.acquire`` and rank state.

The first ``resource.acquire`` response carries the instance's R and the
ranks that are up; later responses on the same stream report ``up``,
``down`` (a drained or crashed rank), ``shrink`` (ranks removed from the
instance) and ``expiration`` changes, one change per response, in the order
the scenario makes them.
"""

from __future__ import annotations

from flux.idset import IDset

from mock_broker.machine import Machine


class ResourceService:
    """Rank availability as the scheduler is told it."""

    def __init__(self, broker, machine: Machine):
        self.broker = broker
        self.machine = machine
        self.R = machine.to_R()
        self.all_ranks = set(machine.ranks())
        self.removed: set[int] = set()
        self.drained: set[int] = set()
        #: When and why each drained rank was drained (``resource.status``).
        self.drain_info: dict[int, tuple[float, str]] = {}
        self.crashed: set[int] = set()
        self.expiration = float(machine.expiration)
        self._streams: list[tuple[object, object]] = []

    # -- state ------------------------------------------------------------

    @property
    def up(self) -> set[int]:
        """Ranks the scheduler may allocate: present, not drained, not down."""
        return self.all_ranks - self.removed - self.drained - self.crashed

    @property
    def existing(self) -> set[int]:
        return self.all_ranks - self.removed

    # -- the RPC ----------------------------------------------------------

    def acquire(self, link, msg) -> None:
        self._streams = [(lk, m) for lk, m in self._streams if lk is not link]
        self._streams.append((link, msg))
        payload = {"resources": self.R, "up": str(IDset(sorted(self.up)))}
        if self.removed:
            payload["shrink"] = str(IDset(sorted(self.removed)))
        if self.expiration:
            payload["expiration"] = self.expiration
        self.broker.respond(link, msg, payload)

    def status(self) -> dict:
        """The ``resource.status`` payload of flux-core 0.88 (what ``flux
        resource status`` shows): R without ``scheduling``, drained ranks
        grouped by when and why, and the ranks online and offline (a rank
        shrunk away is offline); no ranks are excluded or torpid here."""
        R = {k: v for k, v in self.R.items() if k != "scheduling"}
        groups: dict[tuple[float, str], list[int]] = {}
        for rank in sorted(self.drain_info):
            groups.setdefault(self.drain_info[rank], []).append(rank)
        drain = {
            str(IDset(ranks)): {"timestamp": when, "reason": reason}
            for (when, reason), ranks in groups.items()
        }
        offline = self.crashed | self.removed
        return {
            "R": R,
            "drain": drain,
            "online": str(IDset(sorted(self.all_ranks - offline))),
            "offline": str(IDset(sorted(offline))),
            "exclude": "",
            "torpid": "",
        }

    def forget(self, link) -> None:
        self._streams = [(lk, m) for lk, m in self._streams if lk is not link]

    def _notify(self, payload: dict) -> None:
        for link, msg in self._streams:
            self.broker.respond(link, msg, payload)

    # -- changes a scenario makes -----------------------------------------

    def _ranks(self, ranks) -> set[int]:
        ids = set(IDset(ranks)) if not isinstance(ranks, set) else set(ranks)
        unknown = ids - self.all_ranks
        if unknown:
            raise ValueError(
                f"ranks {IDset(sorted(unknown))} are not in this machine "
                f"(ranks 0-{len(self.all_ranks) - 1})"
            )
        return ids

    def _changed(self, before: set[int]) -> None:
        after = self.up
        went_down = before - after
        came_up = after - before
        if went_down:
            self.broker.observer.ranks_down(went_down)
            self._notify({"down": str(IDset(sorted(went_down)))})
        if came_up:
            self.broker.observer.ranks_up(came_up)
            self._notify({"up": str(IDset(sorted(came_up)))})

    def drain(self, ranks, reason: str = "") -> None:
        """Drain *ranks*; a rank already drained keeps its time and reason
        (as ``flux resource drain`` without ``--force``)."""
        before = self.up
        ids = self._ranks(ranks)
        # flux-core keeps the time to the second.
        when = float(round(self.broker.now))
        for rank in ids - self.drained:
            self.drain_info[rank] = (when, reason)
        self.drained |= ids
        self._changed(before)

    def undrain(self, ranks) -> None:
        before = self.up
        ids = self._ranks(ranks)
        self.drained -= ids
        for rank in ids:
            self.drain_info.pop(rank, None)
        self._changed(before)

    def set_down(self, ranks) -> None:
        """A node crashed or its broker went away."""
        before = self.up
        self.crashed |= self._ranks(ranks)
        self._changed(before)

    def set_up(self, ranks) -> None:
        before = self.up
        self.crashed -= self._ranks(ranks)
        self._changed(before)

    def shrink(self, ranks) -> None:
        ids = self._ranks(ranks) - self.removed
        if ids:
            self.removed |= ids
            self._notify({"shrink": str(IDset(sorted(ids)))})

    def set_expiration(self, expiration: float) -> None:
        self.expiration = float(expiration)
        self._notify({"expiration": self.expiration})
