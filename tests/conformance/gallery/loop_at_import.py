"""robust.no-hang: a busy loop at import; mod_main is never reached.

The loop runs Python bytecode, so the worker's watchdog sees the load
phase overrun the callback budget and reports this file's line.
"""

CLAUSE = "robust.no-hang"

while True:
    pass


def mod_main(h, *args):  # pragma: no cover - never reached
    raise AssertionError("unreachable")
