"""Gallery (hello.partial-free): ignores the free idset in hello: it takes back
the job's whole R from the KVS, so ranks already released stay allocated until
the final free.
"""

import os
import sys

from flux.job import JobID
from flux.kvs import get_key_direct
from flux.resource import ResourcePool

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "hello.partial-free"


class IgnoresHelloFree(GalleryFifo):
    """Ignores the free idset in hello: it takes back the job's whole R from
    the KVS, so ranks already released stay allocated until the final free.
    """

    def hello(self, jobid, priority, userid, t_submit, R):
        whole = get_key_direct(self.handle, JobID(jobid).kvs + ".R")
        self.resources.register_alloc(jobid, ResourcePool(whole))

    def free(self, jobid, R, final=False):
        if final:
            R = None  # the partial frees never matched what it holds
        super().free(jobid, R, final)


def mod_main(h, *args):
    IgnoresHelloFree(h, *args).run()
