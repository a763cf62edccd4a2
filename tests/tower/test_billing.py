"""Tower bought by card: checkout, cancel at period end, and billing's errors in Tower's own shape."""

import pytest

from tests.billing.test_stripe import deliver_all

pytestmark = pytest.mark.django_db

CHECKOUT = "/api/v1/tower/checkout"
SUBSCRIPTION = "/api/v1/tower/subscription"


def subscribe(tenant, client, fake):
    response = tenant.client.post(CHECKOUT)
    assert response.status_code == 201, response.content
    deliver_all(client, fake.checkout_complete(response.json()["url"].rsplit("/", 1)[1]))
    return response


def test_with_billing_disabled_checkout_and_cancel_are_503_in_towers_shape(alice, settings):
    settings.BILLING_ENABLED = False
    for response in (alice.client.post(CHECKOUT), alice.client.delete(SUBSCRIPTION)):
        assert response.status_code == 503
        assert response.json()["code"] == "billing_disabled" and response.json()["error"]
    body = alice.client.get(SUBSCRIPTION).json()
    assert body["status"] == "pilot" and body["subscription"] is None and body["billing_enabled"] is False


def test_checkout_gives_a_stripe_page_for_the_tower_price(fake, alice):
    response = alice.client.post(CHECKOUT)
    assert response.status_code == 201
    body = response.json()
    assert set(body) == {"url", "plan", "expires_in_seconds"} and body["plan"] == "tower"
    assert body["url"].startswith("https://checkout.stripe.com/c/pay/cs_test_")
    (sent,) = [params for method, path, params in fake.requests if path == "/v1/checkout/sessions"]
    assert sent["mode"] == "subscription" and sent["line_items"] == [{"price": "price_tower", "quantity": "1"}]
    assert sent["metadata"]["product"] == "tower" and sent["metadata"]["org_id"] == str(alice.org.pk)


def test_the_completed_checkout_shows_an_active_subscription_and_a_second_checkout_is_a_409(fake, alice, client):
    subscribe(alice, client, fake)
    body = alice.client.get(SUBSCRIPTION).json()
    assert body["status"] == "active" and body["plan"] == "tower"
    assert body["subscription"]["cancel_at_period_end"] is False and body["subscription"]["current_period_end"]

    again = alice.client.post(CHECKOUT)
    assert again.status_code == 409
    assert again.json()["code"] == "already_subscribed" and "already" in again.json()["error"]


def test_cancel_is_scheduled_at_period_end_and_a_second_cancel_is_a_409_no_subscription(fake, alice, client):
    subscribe(alice, client, fake)
    response = alice.client.delete(SUBSCRIPTION)
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["plan"] == "tower" and body["subscription_status"] == "active" and body["cancels_at"] is not None
    (sub,) = fake.subscriptions.values()
    assert sub["cancel_at_period_end"] is True and sub["status"] == "active"
    status = alice.client.get(SUBSCRIPTION).json()
    assert status["status"] == "active" and status["subscription"]["cancel_at_period_end"] is True

    again = alice.client.delete(SUBSCRIPTION)
    assert again.status_code == 409
    assert again.json()["code"] == "no_subscription"


def test_cancel_without_a_subscription_is_a_409_no_subscription(fake, alice):
    response = alice.client.delete(SUBSCRIPTION)
    assert response.status_code == 409 and response.json()["code"] == "no_subscription"


def test_a_payment_processor_failure_is_a_502_in_towers_shape(fake, alice, settings):
    settings.STRIPE_SECRET_KEY = "sk_test_wrong"  # the fake Stripe answers 401: not a failure of the request
    response = alice.client.post(CHECKOUT)
    assert response.status_code == 502
    assert response.json()["code"] == "payment_processor"


def test_an_agent_key_cannot_buy_or_cancel(fake, shop):
    assert shop.agent.post(CHECKOUT).status_code == 401
    assert shop.agent.delete(SUBSCRIPTION).status_code == 401
    assert not fake.requests
