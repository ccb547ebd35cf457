"""The seed scheduler, logging the instance's resource.status every 10 s."""

import json

from flux.scheduler import Scheduler


class StatusProbe(Scheduler):
    def run(self):
        self.handle.timer_watcher_create(0.0, self._ask, repeat=10.0).start()
        super().run()

    def _ask(self, h, watcher, revents, args):
        status = h.rpc("resource.status").get()
        self.log.info("status " + json.dumps(status, sort_keys=True))


def mod_main(h, *args):
    StatusProbe(h, *args).run()
