import pytest

from atlas.registry import forget_local
from tests.billing.test_stripe import fake  # noqa: F401 - the loopback Stripe of tests/billing, for test_billing.py


@pytest.fixture(autouse=True)
def _registry_snapshot_per_test(settings):
    """Each test sees its own database's registry: no snapshot carried over, the version checked on every call."""
    settings.ATLAS_REGISTRY_RECHECK_SECONDS = 0
    forget_local()
    yield
    forget_local()
