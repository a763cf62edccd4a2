import pytest

from accounts.models import ApiKey, AuditEvent
from accounts.services import api_key_issue
from core import safe_http
from tests.accounts.proof_servers import LoopbackDns, WellKnownFiles

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def dns(settings, fake_dns):
    """Every lookup of these tests goes to a DNS server on loopback; the proof file's host names
    resolve to loopback, which the default safe_http refuses (so nothing is fetched unless allowed)."""
    fake_dns({name: ["127.0.0.1"] for name in ("alice-shop.com", "bob-shop.com", "a-shop.com", "nobody-here.com")})
    server = LoopbackDns()
    settings.DOMAIN_PROOF_NAMESERVERS = [f"127.0.0.1:{server.port}"]
    settings.DOMAIN_PROOF_DNS_TIMEOUT_SECONDS = 2
    yield server
    server.stop()


@pytest.fixture
def web(settings):
    server = WellKnownFiles()
    settings.DOMAIN_PROOF_URLS = [f"http://{{domain}}:{server.port}{{path}}"]
    yield server
    server.stop()


def start(tenant, domain="alice-shop.com"):
    response = tenant.client.post("/api/v1/org/domain", {"domain": domain}, format="json")
    assert response.status_code == 200, response.json()
    return response.json()


def test_starting_a_proof_returns_the_value_and_where_to_publish_it(alice):
    body = start(alice, "Alice-Shop.COM.")
    assert body["domain"] == "alice-shop.com"
    assert body["value"].startswith("svc-atlas-verification=")
    assert body["dns"] == {"type": "TXT", "name": "_svc-atlas.alice-shop.com", "value": body["value"]}
    assert body["http"] == {"url": "https://alice-shop.com/.well-known/svc-atlas.txt", "body": body["value"]}


@pytest.mark.parametrize("domain", ["localhost", "127.0.0.1", "10.0.0.1", "com", "https://alice-shop.com", "alice-shop.com:8080",
                                    "printer.local", "db.internal", "-bad-.com", "a" * 64 + ".com", "", "exa mple.com", "[::1]", "x.test"])
def test_anything_but_a_public_hostname_is_400(alice, domain):
    response = alice.client.post("/api/v1/org/domain", {"domain": domain}, format="json")
    assert response.status_code == 400
    assert "domain" in response.json()["error"]


def test_a_dns_txt_record_proves_the_domain(alice, dns):
    body = start(alice)
    dns.publish("_svc-atlas.alice-shop.com", body["value"])
    verified = alice.client.post("/api/v1/org/domain/verify")
    assert verified.status_code == 200
    assert verified.json()["method"] == "dns" and verified.json()["domain"] == "alice-shop.com"
    assert alice.client.get("/api/v1/me").json()["organization"]["domain"] == "alice-shop.com"
    assert AuditEvent.objects.filter(org=alice.org, action="accounts.domain.verified").exists()


def test_the_well_known_file_proves_the_domain(alice, dns, web):
    body = start(alice)
    web.files["alice-shop.com"] = "# svc\n" + body["value"] + "\n"
    with safe_http.allow_loopback():
        verified = alice.client.post("/api/v1/org/domain/verify")
    assert verified.status_code == 200 and verified.json()["method"] == "http"
    assert ("alice-shop.com", "/.well-known/svc-atlas.txt") in web.requests


def test_the_default_client_refuses_loopback_so_the_file_is_not_fetched_outside_tests(alice, dns, web):
    body = start(alice)
    web.files["alice-shop.com"] = body["value"]
    refused = alice.client.post("/api/v1/org/domain/verify")
    assert refused.status_code == 422
    assert web.requests == []


def test_no_proof_published_is_422_and_no_proof_started_is_409(alice, dns):
    assert alice.client.post("/api/v1/org/domain/verify").status_code == 409
    start(alice)
    dns.publish("_svc-atlas.alice-shop.com", "svc-atlas-verification=someone-elses-value")
    response = alice.client.post("/api/v1/org/domain/verify")
    assert response.status_code == 422
    assert "not found" in response.json()["error"]


def test_a_domain_verified_by_one_account_is_409_for_another(alice, bob, dns):
    body = start(alice)
    dns.publish("_svc-atlas.alice-shop.com", body["value"])
    assert alice.client.post("/api/v1/org/domain/verify").status_code == 200
    taken = bob.client.post("/api/v1/org/domain", {"domain": "alice-shop.com"}, format="json")
    assert taken.status_code == 409 and "another account" in taken.json()["error"]


def test_a_verified_domain_lifts_the_key_limit(alice, dns, settings):
    settings.API_KEYS_MAX_ACTIVE_UNVERIFIED = 2
    settings.API_KEYS_MAX_ACTIVE = 4
    assert alice.client.post("/api/v1/api-keys", {"name": "a"}, format="json").status_code == 201
    limited = alice.client.post("/api/v1/api-keys", {"name": "b"}, format="json")
    assert limited.status_code == 409 and "verified domain" in limited.json()["error"]
    body = start(alice)
    dns.publish("_svc-atlas.alice-shop.com", body["value"])
    alice.client.post("/api/v1/org/domain/verify")
    assert [alice.client.post("/api/v1/api-keys", {"name": n}, format="json").status_code for n in "bcd"] == [201, 201, 409]


def verified(tenant, dns, domain="alice-shop.com"):
    body = start(tenant, domain)
    dns.publish(f"_svc-atlas.{domain}", body["value"])
    assert tenant.client.post("/api/v1/org/domain/verify").status_code == 200


def test_recovery_revokes_every_key_and_returns_one_new_key_once(alice, client, dns):
    verified(alice, dns)
    api_key_issue(org=alice.org, name="second")
    started = client.post("/api/v1/signup/recover", {"domain": "alice-shop.com"}, format="json")
    assert started.status_code == 200
    dns.publish("_svc-atlas.alice-shop.com", started.json()["value"])
    recovered = client.post("/api/v1/signup/recover/verify", {"domain": "alice-shop.com"}, format="json")
    assert recovered.status_code == 200
    body = recovered.json()
    assert body["org_id"] == str(alice.org.pk) and body["revoked_keys"] == 2 and body["api_key"].startswith(body["key_prefix"])
    assert alice.client.get("/api/v1/me").status_code == 401
    assert client.get("/api/v1/me", HTTP_AUTHORIZATION=f"Bearer {body['api_key']}").status_code == 200
    assert ApiKey.objects.filter(org=alice.org, is_active=True).count() == 1
    assert AuditEvent.objects.filter(org=alice.org, action="accounts.recovery.completed").exists()
    again = client.post("/api/v1/signup/recover/verify", {"domain": "alice-shop.com"}, format="json")
    assert again.status_code == 422  # the proof is used up


def test_recovery_answers_alike_whether_or_not_an_account_holds_the_domain(client, alice, dns):
    verified(alice, dns)
    held = client.post("/api/v1/signup/recover", {"domain": "alice-shop.com"}, format="json").json()
    free = client.post("/api/v1/signup/recover", {"domain": "nobody-here.com"}, format="json").json()
    assert set(held) == set(free)
    assert held["value"] != free["value"]


def test_recovery_without_a_start_or_without_the_value_is_422(client, alice, dns):
    verified(alice, dns)
    assert client.post("/api/v1/signup/recover/verify", {"domain": "alice-shop.com"}, format="json").status_code == 422
    client.post("/api/v1/signup/recover", {"domain": "alice-shop.com"}, format="json")
    missing = client.post("/api/v1/signup/recover/verify", {"domain": "alice-shop.com"}, format="json")
    assert missing.status_code == 422
    assert alice.client.get("/api/v1/me").status_code == 200


def test_a_recovery_proof_counts_24_hours(client, alice, dns, monkeypatch):
    from datetime import timedelta

    from core import clock

    verified(alice, dns)
    started = client.post("/api/v1/signup/recover", {"domain": "alice-shop.com"}, format="json").json()
    dns.publish("_svc-atlas.alice-shop.com", started["value"])
    later = clock.now() + timedelta(hours=24, seconds=1)
    monkeypatch.setattr(clock, "now", lambda: later)
    assert client.post("/api/v1/signup/recover/verify", {"domain": "alice-shop.com"}, format="json").status_code == 422
    assert alice.client.get("/api/v1/me").status_code == 200


def test_recovery_attempts_are_throttled_per_address(client, settings):
    settings.RECOVERY_RATE = "2/h"
    codes = [client.post("/api/v1/signup/recover", {"domain": "a-shop.com"}, format="json").status_code for _ in range(3)]
    assert codes == [200, 200, 429]
    settings.RECOVERY_VERIFY_RATE = "1/h"
    codes = [client.post("/api/v1/signup/recover/verify", {"domain": "a-shop.com"}, format="json").status_code for _ in range(2)]
    assert codes == [422, 429]
