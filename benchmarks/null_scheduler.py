"""The cheapest scheduler module that still speaks RFC 27 correctly.

``mock_throughput.py --schedulers null`` loads it to measure the mock
broker's own cost: the module answers each request in a few microseconds,
so what remains of a job's wall time is the broker, the job-manager, the
KVS and the referee.  It is written on the raw handle API (no
``flux.scheduler.Scheduler``, no resource pool), keeps a count of free
cores per rank and places every job on the first rank with enough of them,
first come first served.  It serves only what the benchmark submits: jobs
of ``slots`` x ``cores`` cores that fit on one node, no GPUs, no hello with
running jobs, no resource changes.
"""

from __future__ import annotations

import time
from collections import deque

import flux.constants
import flux.hostlist
import flux.kvs
from flux.idset import IDset
from flux.job import JobID

from flux_sched_base.pool import idset_text

_SUCCESS, _DENY, _CANCEL = 0, 2, 3  # RFC 27 alloc response types


class NullScheduler:
    """First-come first-served core counts, on the raw RFC 27 messages."""

    def __init__(self, h) -> None:
        self.h = h
        # alloc requests waiting, oldest first, with their payloads (a
        # module-side message decodes its payload again on every access)
        self.queue: deque = deque()
        self.free: list[list[int]] = []  # free core ids per rank
        self.hosts: list[str] = []
        self.widest = 0  # the most cores any rank has
        self.held: dict[int, tuple[int, list[int]]] = {}  # job -> rank, cores
        self.watchers = []

    def run(self) -> None:
        """Register, take the resources, say hello and ready, then serve."""
        for service in ("sched", "feasibility"):
            self.h.service_register(service).get()
        for topic, callback in (
            ("sched.alloc", self.on_alloc),
            ("sched.free", self.on_free),
            ("sched.cancel", self.on_cancel),
            ("sched.prioritize", self.on_ignored),
            ("sched.expiration", self.on_expiration),
            ("feasibility.check", self.on_feasibility),
        ):
            w = self.h.msg_watcher_create(
                callback, flux.constants.FLUX_MSGTYPE_REQUEST, topic
            )
            w.start()
            self.watchers.append(w)
        self.h.module_set_running()
        acquire = self.h.rpc(
            "resource.acquire", flags=flux.constants.FLUX_RPC_STREAMING
        )
        self.take(acquire.get()["resources"])
        hello = self.h.rpc(
            "job-manager.sched-hello", {}, flags=flux.constants.FLUX_RPC_STREAMING
        )
        try:
            hello.get()
        except OSError:
            pass  # ENODATA: no job holds resources
        else:
            raise OSError("the null scheduler takes no running jobs at hello")
        self.h.rpc("job-manager.sched-ready", {"mode": "unlimited"}).get()
        self.h.reactor_run()

    def take(self, R: dict) -> None:
        """Read every rank's cores from R (one ``R_lite`` entry per rank)."""
        execution = R["execution"]
        self.hosts = list(flux.hostlist.Hostlist(execution["nodelist"]))
        ranks: dict[int, list[int]] = {}
        for entry in execution["R_lite"]:
            cores = list(IDset(entry["children"]["core"]))
            for rank in IDset(entry["rank"]):
                ranks[rank] = list(cores)
        self.free = [ranks.get(rank, []) for rank in range(len(self.hosts))]
        self.widest = max(map(len, self.free), default=0)

    # -- requests -----------------------------------------------------------

    def on_alloc(self, h, t, msg, arg) -> None:
        payload = msg.payload
        need, duration = _need(payload["jobspec"])
        self.queue.append((msg, payload["id"], need, duration))
        self.drain()

    def on_free(self, h, t, msg, arg) -> None:
        jobid = msg.payload["id"]
        rank, cores = self.held.pop(jobid)
        self.free[rank].extend(cores)
        self.drain()

    def on_cancel(self, h, t, msg, arg) -> None:
        jobid = msg.payload["id"]
        for entry in self.queue:
            if entry[1] == jobid:
                self.queue.remove(entry)
                h.respond(entry[0], {"id": jobid, "type": _CANCEL})
                return

    def on_expiration(self, h, t, msg, arg) -> None:
        h.respond(msg, {})

    def on_ignored(self, h, t, msg, arg) -> None:
        pass

    def on_feasibility(self, h, t, msg, arg) -> None:
        h.respond(msg, {})

    # -- placement ----------------------------------------------------------

    def drain(self) -> None:
        """Start waiting jobs in arrival order until the head does not fit."""
        while self.queue:
            msg, jobid, need, duration = self.queue[0]
            if need > self.widest:
                self.queue.popleft()
                note = f"needs {need} cores on one node; no node has that many"
                self.h.respond(msg, {"id": jobid, "type": _DENY, "note": note})
                continue
            counts = list(map(len, self.free))
            if need > max(counts):
                return
            rank = next(r for r, count in enumerate(counts) if count >= need)
            self.queue.popleft()
            self.start(msg, jobid, rank, need, duration)

    def start(self, msg, jobid: int, rank: int, need: int, duration: float) -> None:
        free = self.free[rank]
        cores = sorted(free[-need:])
        del free[-need:]
        self.held[jobid] = (rank, cores)
        now = time.time()  # virtual under the mock, as Rv1Pool stamps it
        R = {
            "version": 1,
            "execution": {
                "R_lite": [
                    {"rank": str(rank), "children": {"core": idset_text(cores)}}
                ],
                "nodelist": [self.hosts[rank]],
                "starttime": now,
                "expiration": now + duration if duration else 0.0,
            },
        }
        txn = flux.kvs.KVSTxn(self.h)
        txn.put(JobID(jobid).kvs + ".R", R)
        future = flux.kvs.commit_async(self.h, _kvstxn=txn)
        future.then(self.committed, (msg, jobid, R))

    def committed(self, future, args) -> None:
        msg, jobid, R = args
        future.get()
        self.h.respond(msg, {"id": jobid, "type": _SUCCESS, "R": R})


def _need(jobspec: dict) -> tuple[int, float]:
    """Cores a jobspec asks for (slot count x cores per slot) and its limit."""
    total = 0
    stack = [(r, 1) for r in jobspec["resources"]]
    while stack:
        resource, times = stack.pop()
        count = resource.get("count", 1)
        if isinstance(count, dict):
            count = count["min"]
        if resource["type"] == "core":
            total += times * count
        for child in resource.get("with", ()):
            stack.append((child, times * count))
    duration = jobspec.get("attributes", {}).get("system", {}).get("duration", 0)
    return total, float(duration)


def mod_main(h, *args):
    NullScheduler(h).run()
