"""Shared base library for Flux Python schedulers (not yet populated).

This package will hold what the reference schedulers share and what any
policy author needs on top of ``flux.scheduler.Scheduler``: an
availability-profile planner, annotation bookkeeping, ``starttime`` and
``expiration`` stamping on R, expiration tracking, argument parsing helpers
and statistics.  None of it is written yet; importing the package gives
nothing but this docstring.
"""
