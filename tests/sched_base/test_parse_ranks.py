"""parse_ranks reads an allocated pool object as its encoded R says."""

from __future__ import annotations

import pytest
from flux.idset import IDset
from flux.resource import ResourcePool

from flux_sched_base.planbook import parse_ranks
from mock_broker.jobspec import make_jobspec
from mock_broker.machine import Machine, NodeGroup


def pool():
    machine = Machine((NodeGroup(3, 4, gpus=2), NodeGroup(2, 8)))
    return ResourcePool(machine.to_R())


@pytest.mark.parametrize(
    "spec",
    [
        {"slots": 1, "cores": 1},
        {"slots": 3, "cores": 2},
        {"nodes": 2, "slots": 2, "cores": 4, "gpus": 1},
        {"nodes": 2, "slots": 2, "cores": 1, "exclusive": True},
        {"slots": 9, "cores": 1},
    ],
)
def test_pool_object_and_its_encoding_give_the_same_ranks(spec):
    p = pool()
    p.alloc(1, p.parse_resource_request(make_jobspec(slots=2, cores=3)))
    R = p.alloc(2, p.parse_resource_request(make_jobspec(**spec)))
    expected = parse_ranks(R.to_dict())
    assert expected  # the encoded R names ranks
    assert parse_ranks(R) == expected
    assert parse_ranks(R.impl) == expected


def test_after_ranks_are_removed():
    p = pool()
    R = p.alloc(1, p.parse_resource_request(make_jobspec(slots=5, cores=4)))
    kept = R.copy()
    first = min(parse_ranks(R))
    kept.remove_ranks(IDset(str(first)))
    assert parse_ranks(kept) == parse_ranks(kept.to_dict())
    assert first not in parse_ranks(kept)
