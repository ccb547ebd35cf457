"""Fails at import: it needs a package that does not exist."""

import flux_schedkit_no_such_package  # noqa: F401


def mod_main(h, *args):
    pass
