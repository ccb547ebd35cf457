"""Modules that fail to load in different ways (loaded as ``FILE:Class``)."""

from flux.scheduler import Scheduler


class RaisesInInit(Scheduler):
    def __init__(self, h, *args):
        super().__init__(h, *args)
        raise RuntimeError("cannot read policy file /etc/policy.toml")


class QuitsAtOnce(Scheduler):
    def run(self):
        return


class ParsesOwnArgs(Scheduler):
    """Accepts ``weight=N`` besides the base class's options."""

    def __init__(self, h, *args):
        super().__init__(h, *args)
        self.weight = 1
        for arg in list(self._pending_args):
            if arg.startswith("weight="):
                self.weight = int(arg.split("=", 1)[1])
                self._pending_args.remove(arg)
