"""A deterministic, virtual-time stand-in for a Flux broker.

The mock broker hosts a scheduler broker module written against the
documented flux-python API, unmodified, on a machine with no Flux
installed.  :mod:`mock_broker.flux_substitute` replaces flux-python's native
layer; :mod:`mock_broker.reactor` is the module-side event loop on a
virtual clock.  Importing this package installs nothing.
"""
