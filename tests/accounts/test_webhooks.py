import json
from datetime import UTC, datetime, timedelta

import pytest

from accounts import webhooks
from accounts.models import AuditEvent, Webhook, WebhookAttempt, WebhookDelivery
from core import clock, safe_http
from tests.accounts.receiver import Receiver

# Deliveries are queued on commit, so these tests commit for real.
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def receiver():
    server = Receiver()
    yield server
    server.stop()


@pytest.fixture
def loopback_allowed():
    with safe_http.allow_loopback():
        yield


def set_hook(tenant, url):
    response = tenant.client.put("/api/v1/webhook", {"url": url}, format="json")
    assert response.status_code == 200, response.json()
    return response.json()["secret"]


def verify(received, secret):
    header = received["headers"][webhooks.SIGNATURE_HEADER]
    return webhooks.signature_verify(secret, header, received["body"])


@pytest.mark.parametrize("url", ["http://example.com/hook", "ftp://example.com/", "https://10.0.0.1/hook",
                                 "https://169.254.169.254/latest", "https://user:pw@example.com/", "not a url", "https://[::1]/x"])
def test_a_webhook_url_must_be_https_or_http_on_localhost(alice, url):
    response = alice.client.put("/api/v1/webhook", {"url": url}, format="json")
    assert response.status_code == 400
    assert response.json()["error"].startswith("url")


def test_setting_a_webhook_returns_its_secret_once_and_rotating_changes_it(alice):
    first = set_hook(alice, "https://hooks.example.com/in")
    assert first.startswith("whsec_")
    shown = alice.client.get("/api/v1/webhook").json()
    assert shown["configured"] is True and shown["url"] == "https://hooks.example.com/in"
    assert first not in json.dumps(shown) and shown["secret_prefix"] == first[:12]
    assert "evaluation.failed" in shown["event_types"]
    assert first not in str(Webhook.objects.values().get())  # encrypted at rest
    second = set_hook(alice, "http://localhost:9999/in")
    assert second != first
    actions = list(AuditEvent.objects.filter(org=alice.org, action__startswith="accounts.webhook").values_list("action", flat=True))
    assert sorted(actions) == ["accounts.webhook.rotated", "accounts.webhook.set"]
    assert alice.client.delete("/api/v1/webhook").json() == {"cleared": True}
    assert alice.client.get("/api/v1/webhook").json()["configured"] is False


def test_a_receiver_gets_each_event_once_with_a_signature_it_can_verify(alice, receiver, loopback_allowed):
    secret = set_hook(alice, receiver.url)
    sent = alice.client.post("/api/v1/webhook/test")
    assert sent.status_code == 202
    assert len(receiver.received) == 1
    got = receiver.received[0]
    assert verify(got, secret)
    body = json.loads(got["body"])
    assert body["id"] == sent.json()["event_id"] and body["type"] == "webhook.test" and body["org_id"] == str(alice.org.pk)
    assert got["headers"]["Svc-Event-Id"] == body["id"]
    assert not webhooks.signature_verify("whsec_wrong", got["headers"]["Svc-Signature"], got["body"])
    assert not webhooks.signature_verify(secret, got["headers"]["Svc-Signature"], got["body"] + b" ")
    delivery = WebhookDelivery.objects.get(event_id=body["id"])
    assert delivery.status == "succeeded" and delivery.attempts == 1
    assert alice.client.get("/api/v1/webhook").json()["recent_deliveries"][0]["status"] == "succeeded"


def test_an_old_signature_is_refused_by_the_documented_check():
    body = b'{"id":"evt_x"}'
    header = webhooks.signature_header("whsec_s", body, 1_000_000)
    assert webhooks.signature_verify("whsec_s", header, body, now=1_000_000 + 299)
    assert not webhooks.signature_verify("whsec_s", header, body, now=1_000_000 + 301)


def test_a_receiver_that_fails_twice_gets_the_event_on_the_third_try(alice, loopback_allowed, monkeypatch):
    receiver = Receiver(statuses=[500, 503, 200])
    try:
        now = [datetime(2026, 11, 22, 12, 0, tzinfo=UTC)]
        monkeypatch.setattr(clock, "now", lambda: now[0])
        secret = set_hook(alice, receiver.url)
        event_id = alice.client.post("/api/v1/webhook/test").json()["event_id"]
        delivery = WebhookDelivery.objects.get(event_id=event_id)
        assert delivery.status == "pending" and delivery.next_attempt_at == now[0] + timedelta(seconds=10)
        assert webhooks.webhook_sweep() == 0  # not due yet
        now[0] += timedelta(seconds=10)
        assert webhooks.webhook_sweep() == 1
        now[0] += timedelta(seconds=60)
        webhooks.webhook_sweep()
        delivery.refresh_from_db()
        assert delivery.status == "succeeded" and delivery.attempts == 3
        assert [r["headers"]["Svc-Event-Id"] for r in receiver.received] == [event_id] * 3
        assert all(webhooks.signature_verify(secret, r["headers"]["Svc-Signature"], r["body"], now=now[0].timestamp())
                   for r in receiver.received)
        attempts = list(WebhookAttempt.objects.filter(delivery=delivery).values_list("number", "status_code"))
        assert attempts == [(1, 500), (2, 503), (3, 200)]
        now[0] += timedelta(days=1)
        assert webhooks.webhook_sweep() == 0 and len(receiver.received) == 3
    finally:
        receiver.stop()


def test_a_delivery_fails_for_good_after_the_last_retry(alice, loopback_allowed, settings, monkeypatch):
    settings.WEBHOOK_RETRY_DELAYS = [1.0]
    receiver = Receiver(statuses=[500])
    try:
        now = [clock.now()]
        monkeypatch.setattr(clock, "now", lambda: now[0])
        set_hook(alice, receiver.url)
        alice.client.post("/api/v1/webhook/test")
        now[0] += timedelta(seconds=2)
        webhooks.webhook_sweep()
        delivery = WebhookDelivery.objects.get()
        assert delivery.status == "failed" and delivery.attempts == 2 and "500" in delivery.last_error
    finally:
        receiver.stop()


def test_without_the_test_allowance_a_loopback_webhook_is_never_contacted(alice, receiver):
    set_hook(alice, receiver.url)
    alice.client.post("/api/v1/webhook/test")
    delivery = WebhookDelivery.objects.get()
    assert delivery.status == "pending" and "refused" in delivery.last_error
    assert receiver.received == []


def test_events_are_only_sent_to_their_own_organization(alice, bob, receiver, loopback_allowed):
    set_hook(alice, receiver.url)
    bob.client.post("/api/v1/api-keys", {"name": "bobs"}, format="json")
    assert receiver.received == []
    assert bob.client.get("/api/v1/webhook").json()["recent_deliveries"] == []
    alice.client.post("/api/v1/api-keys", {"name": "alices"}, format="json")
    assert [json.loads(r["body"])["type"] for r in receiver.received] == ["account.key.created"]


def test_the_test_event_needs_a_webhook(alice):
    response = alice.client.post("/api/v1/webhook/test")
    assert response.status_code == 409
