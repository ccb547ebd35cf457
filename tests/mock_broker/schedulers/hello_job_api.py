"""The seed scheduler, reading each running job's jobspec in hello() with
flux-python's own job-info helpers, and logging what it read."""

import json

from flux.job import JobKVSLookup, job_info_lookup, job_kvs_lookup
from flux.job.kvslookup import JobInfoLookupRPC
from flux.scheduler import Scheduler


class HelloJobApi(Scheduler):
    def hello(self, jobid, priority, userid, t_submit, R):
        rpc = job_info_lookup(self.handle, jobid, keys=["jobspec", "R"])
        lookup = JobKVSLookup(self.handle, [jobid, 12345], keys=["R"])
        found = {
            "rpc_class": isinstance(rpc, JobInfoLookupRPC),
            "info": rpc.get_decode(),
            "kvs_lookup": job_kvs_lookup(self.handle, jobid, keys=["jobspec"]),
            "unknown": job_kvs_lookup(self.handle, 12345),
            "many": lookup.data(),
            "errors": lookup.errors,
        }
        self.log.info("lookup " + json.dumps(found, sort_keys=True))
        super().hello(jobid, priority, userid, t_submit, R)

    def schedule(self):
        pass


def mod_main(h, *args):
    HelloJobApi(h, *args).run()
