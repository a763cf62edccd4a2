import pytest

from tests.billing.test_stripe import fake  # noqa: F401 - the loopback Stripe of tests/billing, for test_billing.py
from tests.tower.helpers import agent_client
from tower import services


@pytest.fixture
def shop(alice):
    """alice with the starter workflow loaded (customers, products, policy) and an agent of every scope."""
    services.template_load(org=alice.org)
    alice.agent = agent_client(alice)
    return alice
