"""A deterministic, virtual-time stand-in for a Flux broker.

The mock broker hosts a scheduler broker module written against the
documented flux-python API, unmodified, on a machine with no Flux
installed.  :mod:`mock_broker.flux_substitute` replaces flux-python's native
layer; :mod:`mock_broker.runtime.broker` is the broker itself.

The names below are imported lazily: ``import mock_broker`` installs
nothing; using :class:`MockBroker` installs the substitute (unless a real
libflux is present).
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "MockBroker": "mock_broker.runtime.broker",
    "BrokerStalled": "mock_broker.runtime.broker",
    "BrokerLivelock": "mock_broker.runtime.broker",
    "BrokerUnsettled": "mock_broker.runtime.broker",
    "Machine": "mock_broker.machine",
    "NodeGroup": "mock_broker.machine",
    "make_jobspec": "mock_broker.jobspec",
    "ModuleLoadError": "mock_broker.runtime.module_host",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'mock_broker' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
