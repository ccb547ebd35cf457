"""``lib.flux_get_reactor`` and ``lib.flux_reactor_now``, which flux-core's
own Python schedulers (sched-fifo.py, sched-backfill.py) use to stamp R."""

from __future__ import annotations

import textwrap

from conformance.referee import Referee
from mock_broker.jobspec import make_jobspec
from mock_broker.runtime.broker import MockBroker

MODULE = textwrap.dedent(
    """
    import heapq

    from _flux._core import lib
    from flux.resource import InsufficientResources
    from flux.scheduler import Scheduler


    class Stamping(Scheduler):
        def schedule(self):
            while self._queue:
                job = self._queue[0]
                try:
                    alloc = self.resources.alloc(job.jobid, job.resource_request)
                except InsufficientResources:
                    break
                now = lib.flux_reactor_now(lib.flux_get_reactor(self.handle.handle))
                alloc.set_starttime(now)
                alloc.set_expiration(now + job.resource_request.duration)
                job.request.success(alloc)
                heapq.heappop(self._queue)


    def mod_main(h, *args):
        Stamping(h, *args).run()
    """
)


def test_reactor_now_is_the_virtual_clock(tmp_path):
    path = tmp_path / "stamping.py"
    path.write_text(MODULE)
    b = MockBroker()
    Referee.attach(b)
    b.load(str(path))
    b.run_for(25.0)
    jobid = b.jobs.submit(make_jobspec(nodes=1, duration=60.0), runtime=5.0)
    b.run()
    execution = b.jobs.job(jobid).R["execution"]
    assert execution["starttime"] == b.clock.epoch + 25.0
    assert execution["expiration"] == b.clock.epoch + 85.0
    b.observer.assert_clean()
