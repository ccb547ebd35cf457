"""Gallery (free.no-response): responds to sched.free (as the old revision of RFC
27 asked).
"""

import os
import sys

from flux.constants import FLUX_MSGTYPE_RESPONSE
from flux.message import Message

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _base import GalleryFifo  # noqa: E402

CLAUSE = "free.no-response"


class AnswersFree(GalleryFifo):
    """Responds to sched.free (as the old revision of RFC 27 asked)."""

    def free(self, jobid, R, final=False):
        super().free(jobid, R, final)
        response = Message(FLUX_MSGTYPE_RESPONSE)
        response.topic = "sched.free"
        response.payload = {"id": jobid}
        self.handle.send(response)


def mod_main(h, *args):
    AnswersFree(h, *args).run()
