"""Stands in for the ``_flux`` namespace package of the flux-python wheel."""
