"""Probes of the policy suite (see :mod:`conformance.probes`)."""
