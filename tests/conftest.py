"""Make ``import flux.*`` work in every test.

The pinned flux-python wheel needs libflux for its package init and
helpers; the substitute (:mod:`mock_broker.flux_substitute`) replaces only
that native layer, so the wheel's own scheduler and resource-pool modules
load unmodified.  Installing it here, at import time, happens before any
test module is collected and imports ``flux``.
"""

from mock_broker import flux_substitute

flux_substitute.install()
