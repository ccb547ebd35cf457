"""Helpers for the replay tests: small traces written in the tests, the
paths of the schedulers they replay, and the shared traces."""

from __future__ import annotations

import gzip
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SEED = str(ROOT / "tests" / "mock_broker" / "schedulers" / "stamped_minimal.py")
TRACES = ROOT.parent / "shared" / "traces"
KTH = TRACES / "KTH-SP2-1996-2.1-cln.swf.gz"

#: A hand-made trace on 4 one-core nodes.  Job 3 has an unknown run time
#: (unusable); job 4 an unknown requested size (its allocated size, 3,
#: stands in) and an unknown requested time (its run time stands in).
SMALL = """\
; Version: 2.2
; MaxNodes: 4
; MaxProcs: 4
; UnixStartTime: 1000000
; Information: http://example.org/
;              http://example.org/more
; Note: a hand-made trace
    1   100   0   50   2  -1 -1   2   60  -1 1 7 7 -1 -1 -1 -1 -1
    2   110   0   30  -1  -1 -1   4  100  -1 1 8 8 -1 -1 -1 -1 -1
    3   120   0   -1   1  -1 -1   1   10  -1 0 9 9 -1 -1 -1 -1 -1
    4   130   0   20   3  -1 -1  -1   -1  -1 1 9 9 -1 -1 -1 -1 -1
"""


def swf_line(job_id, submit, run, procs, requested_time, user=1) -> str:
    """One SWF record with the fields a replay reads."""
    return (
        f"{job_id} {submit} 0 {run} {procs} -1 -1 {procs} {requested_time} "
        f"-1 1 {user} 1 -1 -1 -1 -1 -1\n"
    )


def write(tmp_path: Path, text: str, name: str = "t.swf") -> Path:
    """Write *text* as trace *name* (gzip if it ends in .gz)."""
    path = tmp_path / name
    if name.endswith(".gz"):
        with gzip.open(path, "wt") as fh:
            fh.write(text)
    else:
        path.write_text(text)
    return path


def scheduler_module(tmp_path, name: str, schedule_body: str) -> str:
    """A scheduler module file whose ``schedule()`` is *schedule_body*."""
    path = tmp_path / f"{name}.py"
    path.write_text(
        "from flux.scheduler import Scheduler\n\n\n"
        "class Policy(Scheduler):\n"
        "    def schedule(self):\n"
        f"        {schedule_body}\n\n\n"
        "def mod_main(h, *args):\n"
        "    Policy(h, *args).run()\n"
    )
    return str(path)
