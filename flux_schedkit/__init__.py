"""The ``flux-schedkit`` command line: run, locate and check Flux schedulers.

The entry point is :func:`flux_schedkit.cli.main`; each subcommand lives in
its own module under :mod:`flux_schedkit.commands`.
"""
