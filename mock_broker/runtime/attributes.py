"""The broker attributes a module reads with ``h.attr_get()``.

What ``flux lsattr -v`` lists in a flux-core 0.88 instance of size 1 that
was started by ``flux start`` (not a sub-instance of another: no
``jobid`` or ``parent-kvs-namespace``).  Values are plausible and fixed,
so that two runs are alike: the rundir and statedir are paths nobody
creates, the start time is the virtual clock's epoch, the uuid follows
the broker's seed.  An attribute not listed is ENOENT, as in flux-core.
"""

from __future__ import annotations

import uuid

#: The broker's pid as modules see it.
BROKER_PID = 4242

#: The instance owner: the userid jobs are submitted with by default.
OWNER = 1000

_RUNDIR = "/tmp/flux-mock/rundir"


def broker_attributes(seed: int, epoch: float, hostname: str) -> dict[str, str]:
    """The attributes of rank 0 of a size-1 instance, as text.

    Args:
        seed: the broker's seed (the uuid follows it).
        epoch: the virtual wall-clock time the instance started.
        hostname: rank 0's hostname.
    """
    return {
        "broker.boot-method": "simple",
        "broker.critical-ranks": "0",
        "broker.mapping": "[[0,1,1,1]]",
        "broker.pid": str(BROKER_PID),
        "broker.quorum": "1",
        "broker.rc1_path": "flux modprobe rc1",
        "broker.rc3_path": "flux modprobe rc3",
        "broker.starttime": f"{epoch:.2f}",
        "broker.uuid": str(uuid.UUID(int=seed % 2**128, version=4)),
        "content.backing-module": "content-sqlite",
        "content.hash": "sha1",
        "hostlist": hostname,
        "hostname": hostname,
        "instance-level": "0",
        "jobid-path": "/",
        "local-uri": f"local://{_RUNDIR}/local-0",
        "log-critical-level": "2",
        "log-forward-level": "3",
        "log-level": "7",
        "log-ring-size": "1024",
        "log-stderr-level": "3",
        "log-stderr-mode": "leader",
        "log-syslog-enable": "0",
        "log-syslog-level": "3",
        "parent-uri": "-",
        "rank": "0",
        "rundir": _RUNDIR,
        "rundir-cleanup": "0",
        "security.owner": str(OWNER),
        "size": "1",
        "statedir": "/tmp/flux-mock/statedir",
        "statedir-cleanup": "1",
        "tbon.descendants": "0",
        "tbon.level": "0",
        "tbon.maxlevel": "0",
        "tbon.topo": "kary:32",
        "version": "0.88.0",
    }
