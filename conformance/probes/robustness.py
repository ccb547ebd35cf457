"""Probes of the robustness suite (see :mod:`conformance.probes`)."""
