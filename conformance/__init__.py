"""The conformance kit: certifies any Flux Python scheduler module.

The kit drives the scheduler, unmodified, on the mock broker through
probes (:mod:`conformance.probes`), in a child process with budgets
(:mod:`conformance.runner`), judges the outcome against the clause
registry (:mod:`conformance.clauses`) and reports one verdict per clause
(:mod:`conformance.verdicts`, :mod:`conformance.report`,
:mod:`conformance.certificate`).  It runs as a pytest plugin
(:mod:`conformance.plugin`) and as ``flux-schedkit conform``.
"""
