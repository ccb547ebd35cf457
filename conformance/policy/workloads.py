"""The policy suite's workloads: jobs on machines where the textbook
definitions fix every start.

Identical single-core nodes with jobs asking for N one-core slots (150 jobs
of the KTH-SP2 trace, and 240 random jobs shaped like production logs),
identical 4-core nodes with whole-node exclusive jobs, one node of many
cores with jobs asking for N one-core slots, and two variants on
single-core nodes: one job in eight urgent (it overtakes the queue), and
the scheduler restarted six times.  Times are whole milliseconds and every
submit and end has its own instant.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from conformance.policy.textbook import WorkloadJob

#: Jobs in a random workload; nodes of its machines.
RANDOM_JOBS = 240
RANDOM_NODES = 32
WHOLE_NODES, WHOLE_CORES = 16, 4
#: Cores of the one node of the core-level workload.
NODE_CORES = 48
#: In the urgent workload, one job in this many is submitted with
#: :data:`URGENT` urgency (the rest with the default, 16).
URGENT_EVERY, URGENT = 8, 24
#: Offered load of a random workload (work over machine capacity).
LOAD = 1.15

# 150 consecutive jobs of the KTH IBM SP2 log (100 single-processor nodes;
# SWF job ids 3360-3510, submitted from 4564155 s into the log), from the
# Parallel Workloads Archive's KTH-SP2-1996-2.1-cln.swf (Feitelson, Tsafrir
# and Krakov, JPDC 74(10), 2014).  One job per item: seconds since the
# previous submit, processors requested, requested time (the limit), run time.
KTH_NODES = 100
KTH_SAMPLE = """
0,8,3600,626 156,1,6000,1161 683,12,9600,9510 560,2,1800,426 39,2,840,411
14,6,14400,14351 3611,1,900,459 180,1,14400,93 299,1,14400,1521 87,4,840,836
47,2,600,14 344,8,199980,199938 3,8,14400,3967 1382,1,14400,573
753,2,14400,1647 649,1,14400,17 400,1,14400,16 1267,1,180,40 428,2,840,820
896,32,54000,6486 745,3,600,146 65,81,900,4 106,12,14400,9832 469,3,600,146
258,2,840,150 130,5,120,13 406,5,120,18 359,5,120,12 109,80,14400,13978
193,82,900,5 49,3,600,135 141,5,120,72 103,5,120,18 298,5,120,11
176,3,600,117 123,5,120,11 598,3,600,117 369,5,120,11 173,3,600,87
495,1,6000,5971 113,5,120,11 237,5,120,10 54,2,3600,1645 33,32,3300,987
44,5,120,12 62,1,120,10 280,1,120,8 21,1,6000,3558 1109,4,14100,9129
205,5,300,11 84,5,300,17 700,32,3300,992 399,8,10800,50 724,48,3600,35
75,5,300,10 424,5,300,9 264,32,3600,2038 81,1,1800,598 30,5,300,14
180,48,3600,31 151,1,1800,5 133,5,300,17 115,3,5400,4421 62,1,14400,14355
23,3,5400,4487 54,48,3600,675 41,4,900,18 54,1,1800,404 127,5,300,12
62,5,300,17 8,1,1800,7 52,5,600,40 17,5,600,316 53,2,900,849 238,1,1800,279
55,16,52800,52710 49,1,1800,443 66,5,600,42 171,1,1800,276 248,4,1800,279
118,4,180,47 145,1,4800,4744 198,16,1800,353 274,2,3600,1742 128,1,1800,707
33,1,180,37 18,1,300,12 566,8,2400,2317 215,1,300,16 42,1,300,11
57,1,600,416 4,1,300,55 318,1,600,511 179,48,3600,895 41,2,600,344
122,1,600,403 289,1,2400,1990 32,2,300,243 466,3,5400,4981 120,3,5400,4064
14,2,300,34 163,1,3000,2735 75,1,300,252 100,1,600,576 59,1,300,34
125,2,300,31 27,3,5400,4172 182,8,8400,2200 1324,9,129600,81295
358,8,43200,22780 122,1,36000,35945 358,1,1200,706 34,2,210000,209959
385,4,14400,7860 210,1,12000,11955 1826,4,52800,43359 315,6,210000,209924
481,64,86400,45623 2928,8,52200,49856 97,1,600,19 69,3,48000,47971
709,1,600,22 1224,4,14400,5217 1247,20,18000,5556 4621,2,7200,7140
1167,20,18000,1736 17300,9,108000,86669 1789,16,150000,33019
22843,8,43200,35753 2386,16,52800,13166 3497,3,48000,1 166,3,48000,46755
974,8,1200,17 58,4,14100,774 126,1,14100,2504 1458,8,10800,7258
718,8,14400,6207 2859,3,600,42 911,8,4200,35 1002,1,14100,17 270,4,14100,388
248,8,4200,3411 1225,16,52800,52744 2264,1,14100,1067 258,1,14100,3737
157,32,72000,18 2266,8,4200,3416 2467,2,60,16 704,2,120,11 322,22,28800,882
"""


@dataclass(frozen=True)
class Workload:
    """Jobs for *nodes* identical nodes of *cores* cores: a job of size N
    asks for N one-core slots where the machine has single-core nodes or a
    single node, else for N whole nodes, exclusively."""

    name: str
    nodes: int
    cores: int
    jobs: tuple[WorkloadJob, ...]
    #: Keys of the jobs submitted with :data:`URGENT` urgency.
    urgent: frozenset = frozenset()
    #: Times (from the first submit's epoch) at which the scheduler is
    #: unloaded and loaded again, as ``flux module reload`` does.
    restarts: tuple[float, ...] = ()

    @property
    def core_level(self) -> bool:
        """Whether a job's size counts one-core slots (else whole nodes)."""
        return self.cores == 1 or self.nodes == 1

    @property
    def units(self) -> int:
        """What the machine has of what a job's size counts."""
        return self.nodes * self.cores if self.core_level else self.nodes

    @property
    def unit(self) -> str:
        """The name of :attr:`units` in evidence."""
        return "cores" if self.nodes == 1 else "nodes"

    def machine(self):
        from mock_broker.machine import Machine

        return Machine.uniform(self.nodes, self.cores)

    def jobspec(self, job: WorkloadJob) -> dict:
        from mock_broker.jobspec import make_jobspec

        if self.core_level:
            return make_jobspec(slots=job.nodes, duration=job.limit)
        n = job.nodes
        return make_jobspec(
            nodes=n, slots=n, cores=self.cores, exclusive=True, duration=job.limit
        )


def _ms(x: float) -> float:
    return round(x, 3)


def random_jobs(seed: int, nodes: int, count: int = RANDOM_JOBS) -> list[WorkloadJob]:
    """*count* jobs for *nodes* nodes, shaped like production logs.

    Sizes are mostly powers of two and small; limits are log-uniform from
    one minute to four hours, all distinct; about a third of the jobs run
    to their limit, the rest end early; arrivals are Poisson at an offered
    load of :data:`LOAD`.  Every time is rounded to milliseconds and the
    submits are distinct.
    """
    rng = random.Random(f"policy-workload:{seed}:{nodes}:{count}")
    shapes, limits = [], set()
    top = int(math.log2(nodes))
    while len(shapes) < count:
        if rng.random() < 0.6:
            size = 2 ** rng.randint(0, top)
        else:
            size = max(1, min(nodes, int(nodes ** rng.random())))
        limit = _ms(math.exp(rng.uniform(math.log(60), math.log(4 * 3600))))
        if limit in limits:
            continue
        limits.add(limit)
        runtime = limit if rng.random() < 0.35 else _ms(limit * rng.uniform(0.02, 0.97))
        shapes.append((size, limit, max(runtime, 0.001)))
    mean_gap = sum(s * r for s, _, r in shapes) / (nodes * LOAD * count)
    jobs, t = [], 0.0
    for i, (size, limit, runtime) in enumerate(shapes):
        t = _ms(t + max(0.001, _ms(rng.expovariate(1.0 / mean_gap))))
        jobs.append(WorkloadJob(i, t, size, limit, runtime))
    return jobs


def kth_jobs(seed: int) -> list[WorkloadJob]:
    """The :data:`KTH_SAMPLE` jobs, each submit and run time moved by a
    random fraction of a second (milliseconds) so no two events coincide;
    a run never exceeds its limit."""
    rng = random.Random(f"policy-kth:{seed}")
    jobs, t = [], 1.0
    for i, item in enumerate(KTH_SAMPLE.split()):
        gap, procs, limit, run = (int(x) for x in item.split(","))
        t += gap
        submit = _ms(t + rng.randint(1, 999) / 1000)
        runtime = min(float(limit), _ms(run + rng.randint(1, 999) / 1000))
        jobs.append(WorkloadJob(i, submit, procs, float(limit), runtime))
    return jobs


WORKLOADS = {
    "random": lambda seed: Workload(
        "random", RANDOM_NODES, 1, tuple(random_jobs(seed, RANDOM_NODES))
    ),
    "whole-nodes": lambda seed: Workload(
        "whole-nodes", WHOLE_NODES, WHOLE_CORES, tuple(random_jobs(seed, WHOLE_NODES))
    ),
    "kth": lambda seed: Workload("kth", KTH_NODES, 1, tuple(kth_jobs(seed))),
    "cores": lambda seed: Workload(
        "cores", 1, NODE_CORES, tuple(random_jobs(seed, NODE_CORES))
    ),
    "urgent": lambda seed: urgent_workload(seed),
    "restarts": lambda seed: restarts_workload(seed),
}
#: Workloads judged for some policies only.  Where later arrivals overtake
#: queued jobs, the textbook conservative definition does not say whether
#: they may push existing reservations back; after a restart, it does not
#: say whether the reservations made before are kept or placed afresh.
ONLY_FOR = {
    "urgent": ("any", "fifo", "easy"),
    "restarts": ("any", "fifo", "easy"),
}
#: Restarts in the restarts workload, evenly spread over its submits.
RESTARTS = 6


def urgent_workload(seed: int) -> Workload:
    """The random workload's machine with other jobs, one in
    :data:`URGENT_EVERY` (drawn at random) submitted with :data:`URGENT`
    urgency: it goes ahead of the jobs already queued and takes the
    reservation of a blocked head (whose t_estimate must then change)."""
    jobs = random_jobs(seed + 1_000_000, RANDOM_NODES)
    rng = random.Random(f"policy-urgent:{seed}")
    urgent = frozenset(j.key for j in jobs if rng.randrange(URGENT_EVERY) == 0)
    return Workload("urgent", RANDOM_NODES, 1, tuple(jobs), urgent)


def restarts_workload(seed: int) -> Workload:
    """The random workload's machine with other jobs and :data:`RESTARTS`
    restarts of the scheduler while jobs run and wait: the restarted
    scheduler learns the running jobs from hello (their R, expiration
    included) and gets the queue again, and must decide as before.  Each
    restart falls half a millisecond after a submit, where no event is
    (times are whole milliseconds)."""
    jobs = random_jobs(seed + 2_000_000, RANDOM_NODES)
    step = len(jobs) // (RESTARTS + 1)
    restarts = tuple(jobs[step * k].submit + 0.0005 for k in range(1, RESTARTS + 1))
    return Workload("restarts", RANDOM_NODES, 1, tuple(jobs), restarts=restarts)
