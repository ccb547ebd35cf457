"""Stands in for the ``flux`` package init.

The wheel's init opens libflux at import; this one only exposes the
package so that ``flux.scheduler``, ``flux.brokermod``, ``flux.resource``
and every other submodule load from the wheel's own directory (the import
hook sets ``__path__``).  ``flux.Flux()`` outside the mock broker raises
OSError: there is no broker to connect to.
"""


def Flux(*args, **kwargs):
    """Open a broker handle (only possible for a module the mock broker hosts)."""
    from mock_broker.flux_substitute.handle import Flux as _Flux

    return _Flux(*args, **kwargs)


__all__ = ["Flux"]
