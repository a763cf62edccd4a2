"""Beacon's $5 by card: the checkout at the start, and the signed Stripe event that marks the check paid and runs it."""

import pytest

from beacon.models import Check
from billing.signals import payment_succeeded
from core import safe_http
from tests.beacon.sites import good
from tests.billing.test_stripe import deliver, deliver_all

pytestmark = pytest.mark.django_db

CHECKS = "/api/v1/beacon/checks"


@pytest.fixture
def target(site):
    server, origin = site(name="shop.test")
    server.routes.update(good(origin))
    return server, origin + "/"


def start(client, url, capture):
    with safe_http.allow_loopback(), capture(execute=True):
        return client.post(CHECKS, {"url": url}, format="json")


def session_of(body: dict) -> str:
    return body["checkout_url"].rsplit("/", 1)[1]


def test_with_billing_disabled_a_check_is_free_and_has_no_checkout(client, target, settings, django_capture_on_commit_callbacks):
    settings.BILLING_ENABLED = False
    settings.BEACON_FREE_WHEN_BILLING_DISABLED = True
    response = start(client, target[1], django_capture_on_commit_callbacks)
    assert response.status_code == 201
    body = response.json()
    assert body["checkout_url"] is None and body["paid_by"] == "free:billing_disabled"
    assert Check.objects.get(id=body["id"]).status == "done"


def test_with_billing_disabled_and_no_free_checks_the_start_is_a_503(client, target, settings, django_capture_on_commit_callbacks):
    settings.BILLING_ENABLED = False
    settings.BEACON_FREE_WHEN_BILLING_DISABLED = False
    response = start(client, target[1], django_capture_on_commit_callbacks)
    assert response.status_code == 503
    assert not Check.objects.exists()


def test_with_billing_the_check_waits_for_a_five_dollar_card_checkout(fake, client, target, django_capture_on_commit_callbacks):
    response = start(client, target[1], django_capture_on_commit_callbacks)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["status"] == "awaiting_payment" and body["paid_by"] == ""
    assert body["checkout_url"].startswith("https://checkout.stripe.com/c/pay/cs_test_")
    (sent,) = [params for method, path, params in fake.requests if path == "/v1/checkout/sessions"]
    assert sent["mode"] == "payment" and sent["payment_method_types"] == ["card"]
    assert sent["line_items"][0]["price_data"]["unit_amount"] == "500"
    assert sent["metadata"] == {"kind": "beacon", "reference": body["id"]}
    assert sent["success_url"] == body["report_url"]
    status = client.get(f"{CHECKS}/{body['id']}").json()
    assert status["status"] == "awaiting_payment" and status["checkout_url"] == body["checkout_url"]


def test_a_signed_checkout_completed_event_marks_the_check_paid_and_the_scan_runs(fake, client, target, django_capture_on_commit_callbacks):
    body = start(client, target[1], django_capture_on_commit_callbacks).json()
    with django_capture_on_commit_callbacks(execute=True):
        deliver_all(client, fake.checkout_complete(session_of(body)))
    check = Check.objects.get(id=body["id"])
    assert check.status == "done" and check.paid_by == "card" and check.attempts == 1
    status = client.get(f"{CHECKS}/{body['id']}").json()
    assert status["status"] == "done" and status["checkout_url"] is None
    assert status["report"]["scores"]["overall"] == 100


def test_the_same_event_delivered_twice_runs_the_check_once(fake, client, target, django_capture_on_commit_callbacks):
    body = start(client, target[1], django_capture_on_commit_callbacks).json()
    (event,) = fake.checkout_complete(session_of(body))
    with django_capture_on_commit_callbacks(execute=True):
        assert deliver(client, event).status_code == 200
        assert deliver(client, event).json()["duplicate"] is True
    assert Check.objects.get(id=body["id"]).attempts == 1


def test_an_unsigned_event_changes_nothing(fake, client, target, django_capture_on_commit_callbacks):
    body = start(client, target[1], django_capture_on_commit_callbacks).json()
    (event,) = fake.checkout_complete(session_of(body))
    assert deliver(client, event, secret="whsec_wrong").status_code == 400
    assert Check.objects.get(id=body["id"]).status == "awaiting_payment"


def test_a_payment_of_another_kind_or_for_an_unknown_check_is_ignored(fake, client, target, django_capture_on_commit_callbacks):
    body = start(client, target[1], django_capture_on_commit_callbacks).json()
    common = {"org": None, "amount_total": 500, "currency": "usd", "session_id": "cs_test_x"}
    payment_succeeded.send(sender=None, kind="other", reference=body["id"], **common)
    payment_succeeded.send(sender=None, kind="beacon", reference="bcn_unknown", **common)
    assert Check.objects.get(id=body["id"]).status == "awaiting_payment"


def test_when_stripe_fails_no_check_is_left_waiting(fake, client, target, settings, django_capture_on_commit_callbacks):
    settings.STRIPE_SECRET_KEY = "sk_test_wrong"
    response = start(client, target[1], django_capture_on_commit_callbacks)
    assert response.status_code == 502
    assert not Check.objects.exists()


def test_an_organization_pays_for_a_site_it_has_not_verified(fake, alice, target, django_capture_on_commit_callbacks):
    body = start(alice.client, target[1], django_capture_on_commit_callbacks).json()
    assert body["status"] == "awaiting_payment" and body["checkout_url"]
    (sent,) = [params for method, path, params in fake.requests if path == "/v1/checkout/sessions"]
    assert sent["metadata"] == {"kind": "beacon", "reference": body["id"], "org_id": str(alice.org.pk)}
    assert sent["customer"].startswith("cus_")
