"""The KVS key a started job's R is committed under."""

from __future__ import annotations

import pytest

from flux_sched_base.answers import r_key


@pytest.mark.parametrize(
    "jobid, key",
    [
        # as flux-core 0.88's flux.job.JobID(jobid).kvs gives them, plus ".R"
        (1, "job.0000.0000.0000.0001.R"),
        (123, "job.0000.0000.0000.007b.R"),
        (2**63 + 5, "job.8000.0000.0000.0005.R"),
        (348127198912876544, "job.04d4.cbd7.cbda.9000.R"),
    ],
)
def test_r_key_is_the_jobs_dothex_directory(jobid, key):
    assert r_key(jobid) == key
