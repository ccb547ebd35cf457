"""The guide's minimal scheduler, measuring its reactor the libev way: a
prepare watcher notes when the loop is about to block and a check watcher
when it wakes, both active from start to end.  ``loop_utilisation.report``
answers the virtual times at which each ran."""

import os
import sys

from flux.brokermod import request_handler

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from seed_minimal import SimpleScheduler  # noqa: E402
from watcher_probe import _vnow  # noqa: E402


class UtilisationScheduler(SimpleScheduler):
    def __init__(self, h, *args):
        super().__init__(h, *args)
        self.prepared = []
        self.checked = []
        self.prepare = h.prepare_watcher_create(self.on_prepare)
        self.check = h.check_watcher_create(self.on_check)
        self.prepare.start()
        self.check.start()

    def on_prepare(self, *_):
        self.prepared.append(_vnow())

    def on_check(self, *_):
        self.checked.append(_vnow())

    @request_handler("report")
    def report(self, msg):
        self.handle.respond(msg, {"prepare": self.prepared, "check": self.checked})


def mod_main(h, *args):
    UtilisationScheduler(h, *args).run()
