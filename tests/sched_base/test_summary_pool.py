"""The reference schedulers' pool summarizes resources exactly as
flux-python's ``Rv1Pool`` does, and allocates exactly as it does."""

from __future__ import annotations

from flux.resource.Rv1Pool import ResourceRequest, Rv1Pool
from flux.resource.Rv1Set import _display_idset, _idset_str
from hypothesis import given, settings
from hypothesis import strategies as st

from flux_sched_base.pool import Pool, Rv1SummaryPool, display_idset, idset_text
from mock_broker.jobspec import make_jobspec
from mock_broker.machine import Machine

ids = st.sets(st.integers(0, 40), max_size=20)


@settings(max_examples=300, deadline=None)
@given(ids)
def test_idsets_are_written_as_flux_python_writes_them(values):
    assert display_idset(values) == _display_idset(values)
    assert idset_text(values) == _idset_str(values)


def _pools(nodes: int, cores: int, gpus: int, properties=()):
    R = Machine.uniform(nodes, cores, gpus=gpus, properties=properties).to_R()
    return Rv1Pool(R), Rv1SummaryPool(R)


@settings(max_examples=60, deadline=None)
@given(
    nodes=st.integers(1, 6),
    cores=st.integers(1, 6),
    gpus=st.integers(0, 2),
    properties=st.sampled_from([(), ("amd",), ("+local", "big")]),
    requests=st.lists(
        st.tuples(st.integers(1, 4), st.integers(1, 3), st.booleans()),
        max_size=12,
    ),
    frees=st.lists(st.integers(0, 11), max_size=6),
)
def test_allocations_and_summaries_equal_rv1pools(
    nodes, cores, gpus, properties, requests, frees
):
    theirs, ours = _pools(nodes, cores, gpus, properties)
    assert ours.dumps() == theirs.dumps()
    assert ours.to_dict() == theirs.to_dict()
    assert ours.encode() == theirs.encode()
    granted = []
    for jobid, (slots, size, gpu) in enumerate(requests, start=1):
        spec = make_jobspec(slots=slots, cores=size, gpus=int(gpu and gpus > 0))
        request = ResourceRequest.from_jobspec(spec)
        outcomes = []
        for pool in (theirs, ours):
            try:
                outcomes.append(pool.alloc(jobid, request))
            except OSError as exc:
                outcomes.append(type(exc))
        a, b = outcomes
        if isinstance(a, type):
            assert a is b
            continue
        a.set_starttime(100.0 + jobid)
        b.set_starttime(100.0 + jobid)
        assert b.dumps() == a.dumps() and b.encode() == a.encode()
        granted.append(jobid)
    for k in frees:
        if k < len(granted):
            jobid = granted[k]
            if jobid in theirs._job_state:
                theirs.free(jobid)
                ours.free(jobid)
    assert ours.dumps() == theirs.dumps()
    assert ours.to_dict() == theirs.to_dict()
    allocated = ours.copy_allocated(), theirs.copy_allocated()
    assert allocated[0].dumps() == allocated[1].dumps()
    assert allocated[0].to_dict() == allocated[1].to_dict()


def test_the_facade_builds_the_summary_pool_and_wraps_its_allocations():
    pool = Pool(Machine.uniform(2, 4).to_R())
    assert type(pool.impl) is Rv1SummaryPool
    R = pool.alloc(1, ResourceRequest.from_jobspec(make_jobspec(slots=2, cores=2)))
    assert isinstance(R.impl, Rv1SummaryPool)
    assert R.dumps() == Rv1Pool(R.to_dict()).dumps()
