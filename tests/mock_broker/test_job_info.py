"""What flux-core keeps for a job, a scheduler can read: the jobspec and R
under the job's KVS key, and ``job-info.lookup`` answering as flux-core
0.88's job-info module does (errors included)."""

from __future__ import annotations

import errno
import json

import pytest
from flux.job import JobID
from mock_broker_helpers import sched, whole_nodes

from mock_broker.jobspec import make_jobspec
from mock_broker.runtime.broker import MockBroker
from mock_broker.services.kvs import KVSError

R = {
    "version": 1,
    "execution": {
        "R_lite": [{"rank": "0", "children": {"core": "0-3"}}],
        "starttime": 0.0,
        "expiration": 0.0,
        "nodelist": ["node0"],
    },
}


def _hello_lookups(module: str) -> tuple[int, dict, dict]:
    """Run *module* on a broker with one job running; return the job's id
    and jobspec and what the module logged reading them in hello()."""
    b = MockBroker()
    jobspec = whole_nodes(1, duration=600)
    jobid = b.jobs.add_running(R, jobspec)
    b.load(sched(module))
    b.run_until_quiet()
    [text] = [t for _, _, _, t in b.logs if t.startswith("lookup ")]
    return jobid, jobspec, json.loads(text.removeprefix("lookup "))


def test_a_submitted_job_has_its_jobspec_in_the_kvs_without_the_environment():
    b = MockBroker()
    jobspec = make_jobspec(cores=1, duration=30)
    jobspec["attributes"]["system"]["environment"] = {"HOME": "/home/u"}
    jobid = b.jobs.submit(jobspec)
    stored = b.kvs.lookup(f"{JobID(jobid).kvs}.jobspec")
    assert "environment" not in stored["attributes"]["system"]
    assert stored["attributes"]["system"]["duration"] == 30
    assert b.jobs.job(jobid).jobspec["attributes"]["system"]["environment"]


def test_a_scheduler_reads_a_running_jobs_jobspec_and_R_in_hello():
    jobid, jobspec, found = _hello_lookups("hello_lookup.py")
    assert found["kvs"] == jobspec
    assert json.loads(found["text"]["jobspec"]) == jobspec
    assert json.loads(found["text"]["R"]) == R
    assert found["decoded"] == {"id": jobid, "jobspec": jobspec, "R": R}
    assert found["unknown"] == {"errno": errno.ENOENT, "strerror": "invalid job id"}
    assert found["nokey"] == {"errno": errno.ENOENT, "strerror": "nokey: key not found"}
    assert found["badflag"] == {
        "errno": errno.EPROTO,
        "strerror": "lookup request rejected with invalid flag",
    }
    assert found["badkeys"]["errno"] == errno.EPROTO


def test_job_info_has_no_R_for_a_job_not_yet_allocated():
    b = MockBroker()
    jobid = b.jobs.submit(make_jobspec(cores=1))
    assert b.job_info.lookup({"id": jobid, "keys": [], "flags": 3}) == {"id": jobid}
    with pytest.raises(KVSError, match="R: key not found") as info:
        b.job_info.lookup({"id": jobid, "keys": ["jobspec", "R"], "flags": 0})
    assert info.value.errnum == errno.ENOENT


def test_flux_pythons_own_job_info_helpers_run_on_the_substitute():
    jobid, jobspec, found = _hello_lookups("hello_job_api.py")
    assert found["rpc_class"] is True
    assert found["info"] == {"id": jobid, "jobspec": jobspec, "R": R}
    assert found["kvs_lookup"] == {"id": jobid, "jobspec": jobspec}
    assert found["unknown"] is None
    assert found["many"] == [{"id": jobid, "R": R}]
    assert found["errors"] == ["JobID 12345 unknown"]


def test_a_flux_job_name_whose_wheel_module_cannot_load_says_why():
    import flux.job

    with pytest.raises(
        ImportError,
        match="flux.job.event_watch_async .from flux.job.event. does not load",
    ):
        flux.job.event_watch_async  # noqa: B018
