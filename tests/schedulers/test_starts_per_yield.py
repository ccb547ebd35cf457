"""STARTS_PER_YIELD: how many jobs a pass starts per return to the reactor."""

from __future__ import annotations

import pytest
from conftest import module_path

from conformance.referee import Referee
from mock_broker.jobspec import make_jobspec
from mock_broker.machine import Machine
from mock_broker.runtime.broker import MockBroker

BATCHED = """
import importlib.util

_spec = importlib.util.spec_from_file_location("schedkit_fifo_base", {path!r})
_base = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_base)


class Batched(_base.FifoScheduler):
    STARTS_PER_YIELD = {n}


def mod_main(h, *args):
    Batched(h, *args).run()
"""


@pytest.mark.parametrize("per_yield, yields", [(1, 8), (4, 2), (8, 1)])
def test_starts_share_returns_to_the_reactor(tmp_path, per_yield, yields):
    module = tmp_path / f"batched{per_yield}.py"
    module.write_text(BATCHED.format(path=module_path("fifo"), n=per_yield))
    b = MockBroker(Machine.uniform(8, 1))
    Referee.attach(b)
    b.load(str(module), ["queue-depth=unlimited"])
    jobs = [b.jobs.submit(make_jobspec(duration=60), runtime=30) for _ in range(8)]
    b.run_until_quiet()
    assert all(b.jobs.job(j).state == "RUN" for j in jobs)
    # One return to the reactor after every per_yield-th start of the 8.
    assert b.stats()["sched_yields"] == yields
    b.run()
    b.observer.assert_clean()
