"""Conformance kit for Flux Python schedulers (not written yet).

The plan is a pytest plugin that loads a scheduler module into the mock
broker and reports, clause by clause, what it does right and wrong against
RFC 27 and its declared policy.  Nothing of it exists yet: this package is
an empty placeholder so the layout and packaging are in place.
"""
