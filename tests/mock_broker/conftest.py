"""Fixtures for the mock broker's own tests."""

from __future__ import annotations

import pytest

from conformance.referee import Referee
from mock_broker.runtime.broker import MockBroker


@pytest.fixture
def make_broker():
    """Build MockBrokers; every one is closed (module threads end) after the test."""
    made: list[MockBroker] = []

    def make(*args, **kwargs) -> MockBroker:
        broker = MockBroker(*args, **kwargs)
        Referee.attach(broker)
        made.append(broker)
        return broker

    yield make
    for broker in made:
        broker.close()
