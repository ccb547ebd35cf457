"""The guide's minimal scheduler with the signal idioms of a daemon, as an
author who runs it in a real broker would write them.  Each answers
``signal_idioms.report`` with what it saw; loaded as
``signal_idioms.py:Class``."""

import errno
import os
import signal
import sys

from flux.brokermod import request_handler

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from seed_minimal import SimpleScheduler  # noqa: E402


class SignalWatcherScheduler(SimpleScheduler):
    """Dumps its queue on SIGUSR1 through the reactor's signal watcher."""

    def __init__(self, h, *args):
        super().__init__(h, *args)
        self.signalled = []
        self.usr1 = h.signal_watcher_create(signal.SIGUSR1, self.on_signal)
        self.usr1.start()
        with h.signal_watcher_create(signal.SIGHUP, self.on_signal) as hup:
            hup.stop().start()
        hup.destroy()
        try:
            h.signal_watcher_create(0, self.on_signal)
        except OSError as exc:
            self.refused = errno.errorcode[exc.errno]

    def on_signal(self, h, watcher, signum, args):
        self.signalled.append(signum)

    @request_handler("report")
    def report(self, msg):
        answer = {"signalled": self.signalled, "refused": self.refused}
        self.handle.respond(msg, answer)
