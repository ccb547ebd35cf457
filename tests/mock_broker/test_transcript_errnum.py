"""Transcripts name every error number: ``errnum=61 (ENODATA: end of hello)``."""

from __future__ import annotations

import errno
import json

from mock_broker_helpers import SEED

from mock_broker.flux_substitute.jobid import JobID
from mock_broker.jobspec import make_jobspec
from mock_broker.machine import Machine
from mock_broker.runtime.transcript import Entry, errnum_text


def test_the_end_of_hello_is_named_in_a_real_run(make_broker):
    broker = make_broker(Machine.uniform(1, 4))
    broker.load(SEED)
    broker.run()
    hello = [
        line for line in broker.transcript.lines() if "sched-hello (response)" in line
    ]
    assert len(hello) == 1
    assert hello[0].endswith(
        "job-manager.sched-hello (response) errnum=61 (ENODATA: end of hello)"
    )
    record = next(
        e.to_dict() for e in broker.transcript.entries() if e.errnum == errno.ENODATA
    )
    assert record["errnum"] == 61 and record["errname"] == "ENODATA"


def test_any_errno_gets_its_symbolic_name_and_meaning():
    assert errnum_text(errno.ENOENT) == "2 (ENOENT: No such file or directory)"
    # The response's own text wins over the C library's.
    assert errnum_text(errno.EPROTO, errstr="bad limit") == "71 (EPROTO: bad limit)"
    # ENODATA means the end of hello only as the answer to sched-hello.
    assert errnum_text(errno.ENODATA, "kvs.lookup (response)") == (
        "61 (ENODATA: No data available)"
    )
    assert errnum_text(9999).startswith("9999 (unknown errno: ")


def test_an_error_response_line_and_record():
    entry = Entry(
        7, 1.5, "msg", "broker", "mod", "sched.alloc (response)", "", 12, "no memory"
    )
    assert entry.line().endswith("sched.alloc (response) errnum=12 (ENOMEM: no memory)")
    assert entry.to_dict()["errstr"] == "no memory"
    assert entry.to_dict()["errname"] == "ENOMEM"


def test_job_notes_name_the_job_and_why_it_ended_when_read(make_broker):
    # The per-job notes keep the job and are formatted when the transcript
    # is read (transcript.Later): lines, entries and JSON read the same.
    broker = make_broker(Machine.uniform(1, 4))
    broker.load(SEED)
    jobid = broker.jobs.submit(make_jobspec(slots=1, cores=1), runtime=5.0)
    broker.jobs.set_urgency(jobid, 20)  # after the note: it keeps the value then
    broker.run()
    f58 = JobID(jobid).f58
    notes = [e.text for e in broker.transcript.entries() if e.kind == "event"]
    assert f"submit {f58} priority=16" in notes
    ends = [t for t in notes if t.startswith(f"{f58} ends: ")]
    assert len(ends) == 1 and "completed" in ends[0], notes
    assert any(
        line.endswith(f"submit {f58} priority=16") for line in broker.transcript.lines()
    )
    records = [json.loads(r) for r in broker.transcript.to_jsonl().splitlines()]
    assert {"kind": "event", "text": f"submit {f58} priority=16"}.items() <= next(
        r for r in records if r.get("text", "").startswith("submit ")
    ).items()


def test_a_modules_log_lines_are_kept_once(make_broker, tmp_path):
    # A module's log line is in broker.logs and in the transcript ("log"
    # note, read as "LEVEL: text"): the two share the text, so 2,000 lines
    # of 1 kB cost about 2 MB of the kit's memory budget, not 4 (the
    # module is charged for what the mock keeps).
    import gc
    import tracemalloc

    module = tmp_path / "chatty.py"
    module.write_text(
        "from flux.scheduler import Scheduler\n\n\n"
        "def mod_main(h, *args):\n"
        "    for i in range(2000):\n"
        "        h.log(3, f'{i:04d}' + 'x' * 1000)\n"
        "    Scheduler(h, *args).run()\n"
    )
    broker = make_broker(Machine.uniform(1, 4))
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        broker.load(str(module))
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    logged = [e for e in broker.transcript.entries() if e.kind == "log"]
    assert [e.text for e in logged[:2]] == [
        "err: 0000" + "x" * 1000,
        "err: 0001" + "x" * 1000,
    ]
    assert len([text for *_, text in broker.logs if text.endswith("x" * 1000)]) == 2000
    assert kept < 2000 * 1600, f"{kept / 2000:.0f} bytes a line"
