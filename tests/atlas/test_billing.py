"""Atlas tiers bought by card: checkout, switching in place, cancel at period end, against the loopback Stripe."""

import pytest

from billing.models import Subscription
from tests.billing.test_stripe import deliver_all

pytestmark = pytest.mark.django_db

CHECKOUT = "/api/v1/atlas/checkout"
SUBSCRIPTION = "/api/v1/atlas/subscription"


def buy(tenant, client, fake, plan="pro"):
    response = tenant.client.post(CHECKOUT, {"plan": plan}, format="json")
    assert response.status_code == 201, response.content
    deliver_all(client, fake.checkout_complete(response.json()["url"].rsplit("/", 1)[1]))
    tenant.org.refresh_from_db()
    return response


def test_with_billing_disabled_checkout_and_cancel_are_503_and_the_subscription_shows_the_free_tier(alice, settings):
    settings.BILLING_ENABLED = False
    for response in (alice.client.post(CHECKOUT, {"plan": "pro"}, format="json"), alice.client.delete(SUBSCRIPTION)):
        assert response.status_code == 503
        assert response.json() == {"error": "Billing is not enabled on this service."}
    body = alice.client.get(SUBSCRIPTION).json()
    assert body["tier"] == "free" and body["subscription"] is None and body["billing_enabled"] is False
    assert body["lookups_today"]["used"] == 0 and body["limits"]["daily_lookup_limit"] == body["lookups_today"]["limit"]


def test_a_plan_that_is_not_pro_or_team_is_a_400_before_billing_is_asked(alice, settings):
    settings.BILLING_ENABLED = False
    response = alice.client.post(CHECKOUT, {"plan": "free"}, format="json")
    assert response.status_code == 400 and response.json()["error"].startswith("plan:")


def test_the_routes_need_a_key(client):
    assert client.post(CHECKOUT, {"plan": "pro"}, format="json").status_code == 401
    assert client.get(SUBSCRIPTION).status_code == 401
    assert client.delete(SUBSCRIPTION).status_code == 401


def test_checkout_gives_a_stripe_page_for_the_atlas_price_and_the_completed_checkout_sets_the_tier(fake, alice, client):
    response = alice.client.post(CHECKOUT, {"plan": "pro", "success_url": "https://app.example.com/ok"}, format="json")
    assert response.status_code == 201
    body = response.json()
    assert set(body) == {"url", "plan", "expires_in_seconds"} and body["plan"] == "pro"
    assert body["url"].startswith("https://checkout.stripe.com/c/pay/cs_test_")
    (sent,) = [params for method, path, params in fake.requests if path == "/v1/checkout/sessions"]
    assert sent["line_items"] == [{"price": "price_atlas_pro", "quantity": "1"}]
    assert sent["success_url"] == "https://app.example.com/ok" and sent["metadata"]["product"] == "atlas"

    deliver_all(client, fake.checkout_complete(body["url"].rsplit("/", 1)[1]))
    alice.org.refresh_from_db()
    assert alice.org.atlas_tier == "pro"
    status = alice.client.get(SUBSCRIPTION).json()
    assert status["tier"] == "pro" and status["subscription"]["status"] == "active"
    assert status["subscription"]["cancel_at_period_end"] is False


def test_buying_the_tier_you_are_on_is_a_409(fake, alice, client):
    buy(alice, client, fake, "pro")
    response = alice.client.post(CHECKOUT, {"plan": "pro"}, format="json")
    assert response.status_code == 409 and "already on" in response.json()["error"]


def test_buying_the_other_tier_switches_the_subscription_in_place_prorated(fake, alice, client):
    buy(alice, client, fake, "pro")
    response = alice.client.post(CHECKOUT, {"plan": "team"}, format="json")
    assert response.status_code == 200, response.content
    assert response.json() == {"plan": "team", "switched": True, "status": "active"}
    alice.org.refresh_from_db()
    assert alice.org.atlas_tier == "team"
    (sub,) = fake.subscriptions.values()
    assert sub["items"]["data"][0]["price"]["id"] == "price_atlas_team" and sub["proration_behavior_seen"] == "create_prorations"
    assert Subscription.objects.filter(org=alice.org, product="atlas").count() == 1


def test_cancel_is_scheduled_at_period_end_and_a_second_cancel_is_a_409(fake, alice, client):
    buy(alice, client, fake, "team")
    response = alice.client.delete(SUBSCRIPTION)
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["plan"] == "team" and body["subscription_status"] == "active" and body["cancels_at"] is not None
    (sub,) = fake.subscriptions.values()
    assert sub["cancel_at_period_end"] is True and sub["status"] == "active"
    alice.org.refresh_from_db()
    assert alice.org.atlas_tier == "team"  # kept until the period ends
    status = alice.client.get(SUBSCRIPTION).json()
    assert status["subscription"]["cancel_at_period_end"] is True and status["subscription"]["cancels_at"] is not None

    again = alice.client.delete(SUBSCRIPTION)
    assert again.status_code == 409 and "no active" in again.json()["error"]


def test_cancel_without_a_subscription_is_a_409(fake, alice):
    response = alice.client.delete(SUBSCRIPTION)
    assert response.status_code == 409


def test_a_key_with_scope_evaluate_cannot_buy_or_cancel_a_tier(fake, alice):
    from rest_framework.test import APIClient

    from accounts.services import api_key_issue

    issued = api_key_issue(org=alice.org, name="evaluate only", scope="evaluate")
    limited = APIClient()
    limited.credentials(HTTP_AUTHORIZATION=f"Bearer {issued.raw}")
    assert limited.post(CHECKOUT, {"plan": "pro"}, format="json").status_code == 403
    assert limited.delete(SUBSCRIPTION).status_code == 403
    assert not fake.requests
