"""Beacon test fixtures: local sites on loopback under names of their own, and a scan that reaches them."""

import pytest

from beacon.sample_site import LocalSite
from beacon.scan import scan_site
from core import safe_http
from tests.billing.test_stripe import fake  # noqa: F401 - the loopback Stripe of tests/billing, for the paid checks


@pytest.fixture(autouse=True)
def _no_public_registry(settings):
    # The MCP Registry is a public host: tests that need it serve their own and point the setting there.
    settings.BEACON_MCP_REGISTRY_URL = ""


@pytest.fixture
def site(fake_dns):
    """site(routes, name="shop.test") -> (server, "http://shop.test:PORT"): a real HTTP server on loopback."""
    servers = []

    def make(routes=None, *, name: str = "site.test"):
        server = LocalSite(routes or {})
        servers.append(server)
        fake_dns({name: ["127.0.0.1"]})
        return server, f"http://{name}:{server.port}"

    yield make
    for server in servers:
        server.stop()


@pytest.fixture
def scan():
    """scan(url, **kwargs) -> report, with loopback allowed for the length of the scan."""
    def run(url: str, **kwargs):
        with safe_http.allow_loopback():
            return scan_site(url, **kwargs)

    return run


def verdict(report: dict, check_id: str) -> dict:
    return next(c for c in report["checks"] if c["id"] == check_id)
