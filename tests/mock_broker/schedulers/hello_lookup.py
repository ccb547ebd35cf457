"""The seed scheduler, reading each running job's jobspec in hello() both
from the KVS and through job-info, and logging what it read."""

import json

import flux.kvs
from flux.job import JobID
from flux.scheduler import Scheduler


def _answer(h, payload):
    try:
        return h.rpc("job-info.lookup", payload).get()
    except OSError as exc:
        return {"errno": exc.errno, "strerror": exc.strerror}


class HelloLookup(Scheduler):
    def hello(self, jobid, priority, userid, t_submit, R):
        key = JobID(jobid).kvs
        found = {
            "kvs": flux.kvs.get(self.handle, key + ".jobspec"),
            "text": _answer(
                self.handle, {"id": jobid, "keys": ["jobspec", "R"], "flags": 0}
            ),
            "decoded": _answer(
                self.handle, {"id": jobid, "keys": ["jobspec", "R"], "flags": 1}
            ),
            "unknown": _answer(
                self.handle, {"id": 12345, "keys": ["jobspec"], "flags": 0}
            ),
            "nokey": _answer(self.handle, {"id": jobid, "keys": ["nokey"], "flags": 0}),
            "badflag": _answer(self.handle, {"id": jobid, "keys": ["R"], "flags": 4}),
            "badkeys": _answer(self.handle, {"id": jobid, "keys": "R", "flags": 0}),
        }
        self.log.info("lookup " + json.dumps(found, sort_keys=True))
        super().hello(jobid, priority, userid, t_submit, R)

    def schedule(self):
        pass


def mod_main(h, *args):
    HelloLookup(h, *args).run()
