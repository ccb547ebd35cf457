"""Subcommands of ``flux-schedkit``, one module each (see :mod:`flux_schedkit.cli`)."""
