"""Stripe flows through the official SDK against a loopback Stripe that answers in Stripe's wire format,
and Stripe events signed with the SDK's own scheme."""

import json

import pytest

from accounts.models import AuditEvent, Organization, WebhookEvent
from accounts.webhooks import webhook_set
from billing import services
from billing.models import CreditBalance, StripeEvent, Subscription
from billing.signals import payment_succeeded
from core import safe_http
from tests.billing.fake_stripe import FakeStripe, sign

pytestmark = pytest.mark.django_db

WEBHOOK = "/api/v1/billing/webhooks/stripe"
SECRET = "whsec_test_secret"
PRICES = {"starter": "price_starter", "growth": "price_growth", "scale": "price_scale",
          "atlas_pro": "price_atlas_pro", "atlas_team": "price_atlas_team", "tower": "price_tower"}


@pytest.fixture
def fake(settings):
    running = FakeStripe().start()
    settings.STRIPE_SECRET_KEY = running.api_key
    settings.BILLING_ENABLED = True
    settings.STRIPE_API_BASE = running.url
    settings.STRIPE_WEBHOOK_SECRET = SECRET
    settings.STRIPE_PRICES = PRICES
    with safe_http.allow_loopback():
        yield running
    running.stop()


@pytest.fixture
def hooked(alice):
    webhook_set(org=alice.org, url="http://localhost:9/hook")
    return alice


def deliver(client, event: dict, *, secret: str = SECRET, header: str | None = None):
    payload = json.dumps(event).encode()
    signature = header if header is not None else sign(payload, secret)
    return client.post(WEBHOOK, data=payload, content_type="application/json", HTTP_STRIPE_SIGNATURE=signature)


def deliver_all(client, events):
    for event in events:
        response = deliver(client, event)
        assert response.status_code == 200, response.content


def requests_to(fake, path):
    return [params for method, seen, params in fake.requests if seen == path and method == "POST"]


def subscribe(tenant, plan, payment_method=None):
    body = {"plan": plan, **({"payment_method": payment_method} if payment_method else {})}
    return tenant.client.post("/api/v1/billing/subscribe", body, format="json")


def test_without_stripe_keys_every_payment_route_is_503_and_the_catalog_says_so(alice, settings):
    settings.BILLING_ENABLED = False
    assert alice.client.get("/api/v1/plans").json()["billing_enabled"] is False
    calls = [
        ("post", "/api/v1/billing/checkout", {"plan": "starter"}),
        ("post", "/api/v1/billing/subscribe", {"plan": "starter", "payment_method": "pm_1CardVisa"}),
        ("post", "/api/v1/billing/portal", {}),
        ("post", "/api/v1/billing/credits/checkout", {"pack": "small"}),
        ("delete", "/api/v1/billing", None),
    ]
    for method, path, body in calls:
        response = getattr(alice.client, method)(path, body, format="json")
        assert response.status_code == 503, path
        assert response.json() == {"error": "Billing is not enabled on this service."}
    status = alice.client.get("/api/v1/billing").json()
    assert status["billing_enabled"] is False and status["plan"] == "free" and status["subscription_status"] == "none"


def test_input_is_checked_before_billing_is(alice, settings):
    settings.BILLING_ENABLED = False
    response = alice.client.post("/api/v1/billing/checkout", {"plan": "free"}, format="json")
    assert response.status_code == 400 and response.json()["error"].startswith("plan:")
    bad_pm = alice.client.post("/api/v1/billing/subscribe", {"plan": "starter", "payment_method": "card_123"}, format="json")
    assert bad_pm.status_code == 400 and bad_pm.json()["error"].startswith("payment_method:")
    assert alice.client.post("/api/v1/billing/credits/checkout", {"pack": "huge"}, format="json").status_code == 400


def test_checkout_gives_a_stripe_page_and_the_completed_checkout_sets_the_plan(fake, hooked, client):
    response = hooked.client.post("/api/v1/billing/checkout", {"plan": "starter", "success_url": "https://app.example.com/ok"}, format="json")
    assert response.status_code == 201
    body = response.json()
    assert set(body) == {"url", "plan", "expires_in_seconds"}
    assert body["url"].startswith("https://checkout.stripe.com/c/pay/cs_test_") and body["plan"] == "starter"
    assert 86000 < body["expires_in_seconds"] <= 86400
    (sent,) = requests_to(fake, "/v1/checkout/sessions")
    assert sent["mode"] == "subscription" and sent["line_items"] == [{"price": "price_starter", "quantity": "1"}]
    assert sent["success_url"] == "https://app.example.com/ok"
    assert sent["metadata"]["org_id"] == str(hooked.org.pk) and sent["subscription_data"]["metadata"]["plan"] == "starter"

    session_id = body["url"].rsplit("/", 1)[1]
    deliver_all(client, fake.checkout_complete(session_id))
    hooked.org.refresh_from_db()
    assert hooked.org.plan == "starter"
    status = hooked.client.get("/api/v1/billing").json()
    assert status["plan"] == "starter" and status["daily_eval_limit"] == 5000 and status["subscription_status"] == "active"
    assert status["subscription"]["current_period_end"] is not None
    assert AuditEvent.objects.filter(org=hooked.org, action="billing.plan.changed").exists()
    changed = WebhookEvent.objects.get(org=hooked.org, type="billing.plan.changed")
    assert changed.data == {"product": "plan", "plan": "starter", "previous": "free"}

    again = hooked.client.post("/api/v1/billing/checkout", {"plan": "growth"}, format="json")
    assert again.status_code == 409
    same = hooked.client.post("/api/v1/billing/checkout", {"plan": "starter"}, format="json")
    assert same.status_code == 409 and "already on" in same.json()["error"]


def test_subscribe_with_a_card_that_pays_is_201_active(fake, alice):
    response = subscribe(alice, "growth", "pm_1CardVisa")
    assert response.status_code == 201
    body = response.json()
    assert body["outcome"] == "active" and body["status"] == "active" and body["subscription"]["plan"] == "growth"
    alice.org.refresh_from_db()
    assert alice.org.plan == "growth"
    (attached,) = requests_to(fake, "/v1/payment_methods/pm_1CardVisa/attach")
    assert attached["customer"].startswith("cus_")
    (created,) = requests_to(fake, "/v1/subscriptions")
    assert created["payment_behavior"] == "allow_incomplete" and created["items"] == [{"price": "price_growth"}]
    assert subscribe(alice, "growth").status_code == 409


def test_subscribe_that_needs_authentication_is_202_with_a_payment_url(fake, alice):
    response = subscribe(alice, "scale", "pm_1AuthenticationRequired")
    assert response.status_code == 202
    body = response.json()
    assert body["outcome"] == "requires_action" and body["status"] == "incomplete"
    assert body["payment_url"].startswith("https://invoice.stripe.com/i/")
    alice.org.refresh_from_db()
    assert alice.org.plan == "free"
    # The payer authenticates; Stripe reports the subscription active.
    sub = fake.subscriptions[body["subscription"]["id"]]
    sub["status"] = "active"
    response = deliver(alice.client, fake.emit("customer.subscription.updated", sub, {"status": "incomplete"}))
    assert response.status_code == 200
    alice.org.refresh_from_db()
    assert alice.org.plan == "scale"


def test_a_declined_card_is_402_and_nothing_is_subscribed(fake, alice):
    response = subscribe(alice, "starter", "pm_1ChargeDeclined")
    assert response.status_code == 402
    assert response.json() == {"error": "The payment method was rejected: Your card was declined."}
    unknown = subscribe(alice, "starter", "pm_1NotThere")
    assert unknown.status_code == 402 and "No such PaymentMethod" in unknown.json()["error"]
    assert not Subscription.objects.filter(org=alice.org).exists()
    alice.org.refresh_from_db()
    assert alice.org.plan == "free"


def test_a_new_subscription_needs_a_payment_method(fake, alice):
    response = subscribe(alice, "starter")
    assert response.status_code == 400 and response.json()["error"].startswith("payment_method:")


def test_switching_plans_is_prorated_in_place(fake, hooked):
    assert subscribe(hooked, "starter", "pm_1CardVisa").status_code == 201
    response = subscribe(hooked, "scale")
    assert response.status_code == 200
    assert response.json()["outcome"] == "switched" and response.json()["plan"] == "scale"
    (sub,) = fake.subscriptions.values()
    assert sub["proration_behavior_seen"] == "create_prorations"
    assert sub["items"]["data"][0]["price"]["id"] == "price_scale"
    hooked.org.refresh_from_db()
    assert hooked.org.plan == "scale" and Subscription.objects.filter(org=hooked.org).count() == 1
    assert subscribe(hooked, "scale").status_code == 409
    changes = [event.data for event in WebhookEvent.objects.filter(org=hooked.org, type="billing.plan.changed").order_by("created_at")]
    assert changes == [{"product": "plan", "plan": "starter", "previous": "free"}, {"product": "plan", "plan": "scale", "previous": "starter"}]


def test_cancel_is_scheduled_at_period_end_and_a_second_cancel_is_409(fake, hooked, client):
    assert hooked.client.delete("/api/v1/billing").status_code == 409
    assert subscribe(hooked, "growth", "pm_1CardVisa").status_code == 201
    response = hooked.client.delete("/api/v1/billing")
    assert response.status_code == 200
    body = response.json()
    assert body["plan"] == "growth" and body["subscription_status"] == "active" and body["cancels_at"]
    assert hooked.client.delete("/api/v1/billing").status_code == 409
    hooked.org.refresh_from_db()
    assert hooked.org.plan == "growth"  # until the period ends
    assert WebhookEvent.objects.filter(org=hooked.org, type="billing.subscription.canceled").count() == 1
    # The period ends: Stripe deletes the subscription.
    (sub,) = fake.subscriptions.values()
    sub["status"] = "canceled"
    assert deliver(client, fake.emit("customer.subscription.deleted", sub)).status_code == 200
    hooked.org.refresh_from_db()
    assert hooked.org.plan == "free"
    assert hooked.client.get("/api/v1/billing").json()["subscription_status"] == "none"


def test_the_portal_is_a_stripe_url_for_the_organizations_customer(fake, alice):
    response = alice.client.post("/api/v1/billing/portal", {"return_url": "https://app.example.com/account"}, format="json")
    assert response.status_code == 200
    assert response.json()["url"].startswith("https://billing.stripe.com/p/session/")
    (sent,) = requests_to(fake, "/v1/billing_portal/sessions")
    assert sent["return_url"] == "https://app.example.com/account" and sent["customer"].startswith("cus_")
    assert alice.client.post("/api/v1/billing/portal", {}, format="json").status_code == 200
    assert len(requests_to(fake, "/v1/customers")) == 1  # one customer per organization


def test_a_credit_pack_lands_once_in_the_balance(fake, hooked, client):
    response = hooked.client.post("/api/v1/billing/credits/checkout", {"pack": "medium"}, format="json")
    assert response.status_code == 201
    body = response.json()
    assert body["pack"] == "medium" and body["credits"] == 100_000 and body["price_usd"] == 149
    (sent,) = requests_to(fake, "/v1/checkout/sessions")
    assert sent["mode"] == "payment" and sent["payment_method_types"] == ["card", "crypto"]
    assert sent["line_items"][0]["price_data"]["unit_amount"] == "14900"
    events = fake.checkout_complete(body["id"])
    deliver_all(client, events)
    assert CreditBalance.objects.get(org=hooked.org).balance == 100_000
    replay = deliver(client, events[-1])
    assert replay.status_code == 200 and replay.json()["duplicate"] is True
    # The same payment reported again under another event id still adds nothing.
    deliver_all(client, [fake.async_payment(body["id"], succeeded=True)])
    assert CreditBalance.objects.get(org=hooked.org).balance == 100_000
    added = WebhookEvent.objects.get(org=hooked.org, type="billing.credits.added")
    assert added.data["amount"] == 100_000 and added.data["balance"] == 100_000
    assert AuditEvent.objects.filter(org=hooked.org, action="billing.credits.added").count() == 1
    assert hooked.client.get("/api/v1/billing").json()["credits"] == {"balance": 100_000}


def test_a_stablecoin_payment_lands_when_it_settles_and_a_failed_one_is_reported(fake, hooked, client):
    paid = hooked.client.post("/api/v1/billing/credits/checkout", {"pack": "small"}, format="json").json()
    deliver_all(client, fake.checkout_complete(paid["id"], payment_status="unpaid"))
    assert not CreditBalance.objects.filter(org=hooked.org, balance__gt=0).exists()
    deliver_all(client, [fake.async_payment(paid["id"], succeeded=True)])
    assert CreditBalance.objects.get(org=hooked.org).balance == 10_000
    failed = hooked.client.post("/api/v1/billing/credits/checkout", {"pack": "large"}, format="json").json()
    deliver_all(client, fake.checkout_complete(failed["id"], payment_status="unpaid"))
    deliver_all(client, [fake.async_payment(failed["id"], succeeded=False)])
    assert CreditBalance.objects.get(org=hooked.org).balance == 10_000
    assert WebhookEvent.objects.filter(org=hooked.org, type="billing.payment.failed").count() == 1


def test_events_out_of_order_leave_the_newest_state(fake, alice, client):
    assert subscribe(alice, "starter", "pm_1CardVisa").status_code == 201
    (sub,) = fake.subscriptions.values()
    older = fake.emit("customer.subscription.updated", {**sub, "items": {**sub["items"], "data": [
        {**sub["items"]["data"][0], "price": {"id": "price_growth", "object": "price"}}]}}, created=2_000_000_000)
    newer = fake.emit("customer.subscription.updated", {**sub, "items": {**sub["items"], "data": [
        {**sub["items"]["data"][0], "price": {"id": "price_scale", "object": "price"}}]}}, created=2_000_000_100)
    deliver_all(client, [newer, older])
    alice.org.refresh_from_db()
    assert alice.org.plan == "scale"
    assert StripeEvent.objects.filter(id__in=[older["id"], newer["id"]]).count() == 2


def test_a_replayed_event_is_applied_once(fake, hooked, client):
    assert subscribe(hooked, "starter", "pm_1CardVisa").status_code == 201
    (sub,) = fake.subscriptions.values()
    sub["status"] = "canceled"
    event = fake.emit("customer.subscription.deleted", sub, created=2_100_000_000)
    first, second = deliver(client, event), deliver(client, event)
    assert first.json()["duplicate"] is False and second.json()["duplicate"] is True
    assert WebhookEvent.objects.filter(org=hooked.org, type="billing.subscription.canceled").count() == 1


def test_a_bad_signature_is_refused_and_changes_nothing(fake, alice, client):
    assert subscribe(alice, "starter", "pm_1CardVisa").status_code == 201
    (sub,) = fake.subscriptions.values()
    sub["status"] = "canceled"
    event = fake.emit("customer.subscription.deleted", sub, created=2_100_000_000)
    for header in ["", "t=1,v1=deadbeef", sign(json.dumps(event).encode(), "whsec_other")]:
        response = deliver(client, event, header=header)
        assert response.status_code == 400
        assert response.json() == {"error": "Stripe-Signature does not verify."}
    stale = sign(json.dumps(event).encode(), SECRET, timestamp=1_000_000_000)
    assert deliver(client, event, header=stale).status_code == 400
    assert not StripeEvent.objects.filter(id=event["id"]).exists()
    alice.org.refresh_from_db()
    assert alice.org.plan == "starter"


def test_a_one_time_payment_tells_its_product_once(fake, client):
    heard = []

    def receiver(sender, **kwargs):
        heard.append((kwargs["kind"], kwargs["reference"], kwargs["amount_total"]))

    payment_succeeded.connect(receiver)
    try:
        result = services.payment_checkout_create(kind="beacon", reference="bcn_abcdefghijklmnop", amount_cents=500,
                                                  description="Beacon check of example.com")
        assert result["url"].startswith("https://checkout.stripe.com/")
        events = fake.checkout_complete(result["id"])
        deliver_all(client, events)
        deliver(client, events[-1])
    finally:
        payment_succeeded.disconnect(receiver)
    assert heard == [("beacon", "bcn_abcdefghijklmnop", 500)]


def test_atlas_and_tower_subscriptions_follow_their_own_product(fake, hooked, client):
    result = services.checkout_create(org=hooked.org, product="atlas", plan="pro")
    deliver_all(client, fake.checkout_complete(result["url"].rsplit("/", 1)[1]))
    hooked.org.refresh_from_db()
    assert hooked.org.atlas_tier == "pro" and hooked.org.plan == "free"
    switched = services.checkout_create(org=hooked.org, product="atlas", plan="team", switch=True)
    assert switched["switched"] is True
    hooked.org.refresh_from_db()
    assert hooked.org.atlas_tier == "team"
    tower = services.checkout_create(org=hooked.org, product="tower", plan="tower")
    deliver_all(client, fake.checkout_complete(tower["url"].rsplit("/", 1)[1]))
    assert services.subscription_current(org=hooked.org, product="tower").status == "active"
    assert services.subscription_cancel(org=hooked.org, product="tower")["cancels_at"]
    assert services.subscription_cancel(org=hooked.org, product="atlas")["plan"] == "team"
    statuses = hooked.client.get("/api/v1/billing").json()
    assert statuses["atlas_subscription"]["cancel_at_period_end"] is True
    assert statuses["tower_subscription"]["cancel_at_period_end"] is True
    assert Organization.objects.get(pk=hooked.org.pk).atlas_tier == "team"


def test_deleting_the_organization_cancels_its_subscription_first(fake, alice):
    assert subscribe(alice, "growth", "pm_1CardVisa").status_code == 201
    response = alice.client.delete("/api/v1/org", {"confirm": "alice"}, format="json")
    assert response.status_code == 200
    assert response.json()["subscription_canceled"] is True and response.json()["deleted"] is True
    (sub,) = fake.subscriptions.values()
    assert sub["status"] == "canceled"
    assert not Organization.objects.filter(pk=alice.org.pk).exists()


def test_when_the_subscription_cannot_be_canceled_nothing_is_deleted(fake, alice):
    assert subscribe(alice, "growth", "pm_1CardVisa").status_code == 201
    fake.fail_cancel = True
    response = alice.client.delete("/api/v1/org", {"confirm": "alice"}, format="json")
    assert response.status_code == 502
    assert response.json() == {"error": "The subscription could not be canceled; nothing was deleted."}
    assert Organization.objects.filter(pk=alice.org.pk).exists()
    assert Subscription.objects.get(org=alice.org).status == "active"


def test_an_organization_without_a_subscription_is_deleted_without_stripe(alice, settings):
    settings.BILLING_ENABLED = False
    response = alice.client.delete("/api/v1/org", {"confirm": "alice"}, format="json")
    assert response.status_code == 200 and response.json()["subscription_canceled"] is False


@pytest.mark.urls("tests.billing.meter_urls")
def test_bought_credits_pay_once_the_days_allowance_is_spent(fake, alice, client, monkeypatch):
    from billing import constants

    monkeypatch.setitem(constants.PLANS, "free", constants.Plan("free", "Free", 0, 1, 1000, "test", False))
    pack = alice.client.post("/api/v1/billing/credits/checkout", {"pack": "small"}, format="json").json()
    deliver_all(client, fake.checkout_complete(pack["id"]))
    assert alice.client.post("/metered", {}, format="json")["X-RateLimit-Remaining"] == "0"
    paid_by_credits = alice.client.post("/metered", {}, format="json")
    assert paid_by_credits.status_code == 200
    assert paid_by_credits["X-Quota-Source"] == "credits" and paid_by_credits["X-Credits-Remaining"] == "9999"
