"""robust.no-hang: a loop at import that never releases the GIL.

sum() over an endless iterator runs entirely in C, so no other thread of
the worker (its watchdog included) ever runs again.  The parent ends it
when its signs of life stop, or at the wall budget: SIGUSR1 makes
faulthandler dump the stacks (from its C signal handler), then SIGKILL.
"""

import itertools

CLAUSE = "robust.no-hang"

TOTAL = sum(itertools.repeat(1))


def mod_main(h, *args):  # pragma: no cover - never reached
    raise AssertionError("unreachable")
