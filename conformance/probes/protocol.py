"""Probes of the protocol suite (see :mod:`conformance.probes`)."""
