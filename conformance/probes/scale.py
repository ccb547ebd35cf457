"""Probes of the scale suite (see :mod:`conformance.probes`)."""
