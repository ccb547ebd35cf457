"""Make ``import flux.*`` work in every test.

The pinned flux-python wheel needs libflux for its package init and
helpers; the substitute (:mod:`mock_broker.flux_substitute`) replaces only
that native layer, so the wheel's own scheduler and resource-pool modules
load unmodified.  Installing it here, at import time, happens before any
test module is collected and imports ``flux``.
"""

from mock_broker import flux_substitute

flux_substitute.install()


import pytest  # noqa: E402

from conformance.referee import Referee  # noqa: E402
from mock_broker.runtime.broker import MockBroker  # noqa: E402


@pytest.fixture
def make_broker():
    """Build MockBrokers with the kit's referee attached; every one is
    closed (module threads end) after the test."""
    made: list[MockBroker] = []

    def make(*args, **kwargs) -> MockBroker:
        broker = MockBroker(*args, **kwargs)
        Referee.attach(broker)
        made.append(broker)
        return broker

    yield make
    for broker in made:
        broker.close()
