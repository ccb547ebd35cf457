"""The seed scheduler, logging the broker attributes named in its
arguments (or the error reading one) as it starts."""

import json

from flux.scheduler import Scheduler


def _attr(h, name):
    try:
        return h.attr_get(name)
    except OSError as exc:
        return exc.errno


def mod_main(h, *args):
    found = {name: _attr(h, name) for name in args}
    sched = Scheduler(h)
    sched.log.info("attrs " + json.dumps(found, sort_keys=True))
    sched.run()
