"""Housekeeping: resources of finished jobs, released rank by rank.

flux-core hands every finished job's R to housekeeping, which releases it
to the scheduler: in one final ``sched.free``, or, with ``release-after``,
rank by rank as each node's cleanup finishes, ``final`` only on the last.
Ranks already released are what a later hello reports in ``free``; a
scheduler that did not ask for ``partial-ok`` cannot take such a job back,
so its housekeeping is terminated and the ranks return silently.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from flux.idset import IDset
from flux.resource import Rv1Set

from mock_broker.jobmanager.jobs import Job, ranks_of


@dataclass
class Allocation:
    """A finished job's R still (partly) held by housekeeping."""

    job: Job
    pending: list[int]  # ranks not yet released
    freed: list[int] = field(default_factory=list)


class Housekeeping:
    """The job-manager's housekeeping, as the scheduler sees it."""

    def __init__(self, job_manager):
        self.jm = job_manager
        self.broker = job_manager.broker
        self.allocations: dict[int, Allocation] = {}

    def holds(self, jobid: int) -> bool:
        """True if housekeeping still holds some of the job's ranks."""
        return jobid in self.allocations

    def held_ranks(self) -> dict[int, int]:
        """Rank -> job id for every rank housekeeping still holds."""
        return {r: a.job.id for a in self.allocations.values() for r in a.pending}

    def release(self, job: Job) -> None:
        """A job ended: release its R by its plan, the broker's
        ``release_after``, or all at once."""
        plan = job.release
        try:
            ranks = sorted(ranks_of(job.R, self.broker.machine.size))
        except (ValueError, TypeError):
            # flux-core's housekeeping cannot parse such an R either, and
            # returns it to the scheduler at once in one final free.
            self.jm.send_free(job, job.R, final=True)
            return
        if plan is None and self.jm.release_after is not None and len(ranks) > 1:
            # The first rank goes at once, then one every release_after s.
            plan = [[self.jm.release_after * i, [r]] for i, r in enumerate(ranks)]
        if not plan:
            self.jm.send_free(job, job.R, final=True)
            return
        allocation = Allocation(job, list(ranks))
        self.allocations[job.id] = allocation
        self._schedule_batches(allocation, plan)

    def adopt(self, job: Job, freed: list[int]) -> None:
        """A job that ended before the scenario started, with *freed* ranks
        already released; the rest follow by its plan."""
        ranks = sorted(ranks_of(job.R))
        if not freed or set(freed) - set(ranks) or not set(ranks) - set(freed):
            raise ValueError(
                f"released ranks {IDset(freed)} must be some, not all, of the "
                f"job's ranks {IDset(ranks)}"
            )
        allocation = Allocation(job, [r for r in ranks if r not in freed], list(freed))
        self.allocations[job.id] = allocation
        # The freed ranks are no longer held as far as the observer knows.
        freed_R = Rv1Set(job.R).copy_ranks(IDset(freed)).to_dict()
        self.broker.observer.free_sent(job.id, freed_R, final=False)
        plan = job.release
        if plan is None and self.jm.release_after is not None:
            plan = [
                [self.jm.release_after * (i + 1), [r]]
                for i, r in enumerate(allocation.pending)
            ]
        elif plan is None:
            plan = [[job.runtime, list(allocation.pending)]]
        self._schedule_batches(allocation, plan)

    def hello_entries(self, partial_ok: bool) -> list[tuple[Job, list[int]]]:
        """The allocations to report in hello, with their freed ranks.

        Without *partial_ok*, partly released allocations are terminated
        (their ranks come back without the scheduler hearing of them).
        """
        entries = []
        for jobid in sorted(self.allocations):
            allocation = self.allocations[jobid]
            if allocation.freed and not partial_ok:
                self.broker.transcript.note(
                    "event",
                    "job-manager",
                    f"housekeeping of {allocation.job.f58} terminated: scheduler "
                    "does not support restart with partially released resources",
                )
                del self.allocations[jobid]
                allocation.job.has_resources = False
                self.broker.observer.free_sent(jobid, allocation.job.R, final=True)
                continue
            entries.append((allocation.job, list(allocation.freed)))
        return entries

    def _schedule_batches(self, allocation: Allocation, plan: list) -> None:
        for delay, batch in plan:
            self.broker.after(
                float(delay), lambda b=list(batch): self._release_batch(allocation, b)
            )

    def _release_batch(self, allocation: Allocation, batch: list[int]) -> None:
        job = allocation.job
        if self.allocations.get(job.id) is not allocation:
            return
        batch = [r for r in batch if r in allocation.pending]
        if not batch:
            return
        for rank in batch:
            allocation.pending.remove(rank)
        allocation.freed.extend(batch)
        final = not allocation.pending
        if final:
            del self.allocations[job.id]
        R = Rv1Set(job.R).copy_ranks(IDset(sorted(batch))).to_dict()
        if self.jm.online:
            self.jm.send_free_R(job.id, R, final)
        if final:
            job.has_resources = False
