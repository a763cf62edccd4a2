"""Shared fixtures: the network guard, API clients, and two organizations, alice and bob."""

import pytest
from django.core.servers import basehttp
from rest_framework.test import APIClient

from tests import netguard

netguard.install()

# The live test server takes bursts of parallel clients (concurrency tests): a deeper listen queue
# than Django's 10, so the kernel does not reset connections that a production server would queue.
basehttp.WSGIServer.request_queue_size = 256


@pytest.fixture(autouse=True)
def _no_packet_leaves_loopback():
    netguard.take_attempts()
    yield
    attempts = netguard.take_attempts()
    assert not attempts, f"the code under test tried to reach the network outside loopback: {attempts}"


@pytest.fixture
def fake_dns():
    """Register names for the test resolver: fake_dns({"evil.test": ["10.0.0.1"]})."""
    def register(mapping: dict[str, list[str]]):
        for name, addresses in mapping.items():
            netguard.fake_names[name.lower().rstrip(".")] = list(addresses)
    yield register
    netguard.fake_names.clear()


@pytest.fixture(autouse=True, scope="session")
def _tasks_run_in_process():
    """Tasks run eagerly in tests, even with a broker configured; tests/accounts/test_webhook_worker.py
    is the one place that sends them to a real worker."""
    from config.celery import app

    app.conf.task_always_eager = True
    yield


@pytest.fixture(autouse=True)
def _fresh_cache():
    from django.core.cache import cache

    cache.clear()
    yield


@pytest.fixture
def client():
    return APIClient()


class Tenant:
    """An organization with a full key, and a client that sends it."""

    def __init__(self, org, issued):
        self.org = org
        self.key = issued.raw
        self.key_row = issued.key
        self.client = APIClient()
        self.client.credentials(HTTP_AUTHORIZATION=f"Bearer {issued.raw}")


def make_tenant(name: str) -> Tenant:
    from accounts import services

    org, issued = services.signup(org_name=name)
    return Tenant(org, issued)


@pytest.fixture
def alice(db):
    return make_tenant("alice")


@pytest.fixture
def bob(db):
    return make_tenant("bob")
