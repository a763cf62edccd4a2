import threading
from datetime import UTC, datetime, timedelta

import pytest
import requests

from billing import constants
from billing.models import Allowance, CreditBalance
from billing.services import credits_grant
from core import clock

pytestmark = [pytest.mark.urls("tests.billing.meter_urls")]


class Clock:
    """A controlled clock: tests move it instead of sleeping."""

    def __init__(self, start: datetime):
        self.at = start

    def __call__(self):
        return self.at

    def advance(self, **delta):
        self.at += timedelta(**delta)


@pytest.fixture
def frozen(monkeypatch):
    controlled = Clock(datetime(2026, 11, 22, 10, 0, 5, tzinfo=UTC))
    monkeypatch.setattr(clock, "now", controlled)
    return controlled


def small_plan(monkeypatch, *, daily: int, per_minute: int = 1000):
    monkeypatch.setitem(constants.PLANS, "free", constants.Plan("free", "Free", 0, daily, per_minute, "test", False))


def call(tenant, units=1, **body):
    return tenant.client.post("/metered", {"units": units, **body}, format="json")


@pytest.mark.django_db
def test_a_keyed_call_carries_the_daily_and_burst_headers(alice, frozen):
    response = call(alice)
    assert response.status_code == 200
    midnight = int(datetime(2026, 11, 23, tzinfo=UTC).timestamp())
    assert response["X-RateLimit-Limit"] == "250"
    assert response["X-RateLimit-Remaining"] == "249"
    assert response["X-RateLimit-Reset"] == str(midnight)
    assert response["X-Burst-Limit"] == "30"
    assert response["X-Burst-Remaining"] == "29"
    assert response["X-Burst-Reset"] == str(int(datetime(2026, 11, 22, 10, 1, tzinfo=UTC).timestamp()))
    assert "X-Quota-Source" not in response


@pytest.mark.django_db
def test_the_allowance_resets_at_utc_midnight(alice, frozen, monkeypatch):
    small_plan(monkeypatch, daily=3)
    assert [call(alice).status_code for _ in range(4)] == [200, 200, 200, 429]
    refused = call(alice)
    assert refused["X-RateLimit-Remaining"] == "0"
    assert int(refused["Retry-After"]) == int((datetime(2026, 11, 23, tzinfo=UTC) - frozen.at).total_seconds())
    assert "resets at UTC midnight" in refused.json()["error"]
    frozen.at = datetime(2026, 11, 22, 23, 59, 59, tzinfo=UTC)
    assert call(alice).status_code == 429
    frozen.at = datetime(2026, 11, 23, 0, 0, 0, tzinfo=UTC)
    fresh = call(alice)
    assert fresh.status_code == 200 and fresh["X-RateLimit-Remaining"] == "2"


@pytest.mark.django_db
def test_the_minute_window_refuses_past_the_burst_and_opens_at_the_next_minute(alice, frozen, monkeypatch):
    small_plan(monkeypatch, daily=100, per_minute=5)
    assert [call(alice).status_code for _ in range(6)] == [200] * 5 + [429]
    refused = call(alice)
    assert refused["X-Burst-Remaining"] == "0"
    assert int(refused["Retry-After"]) == 55  # the clock stands at 10:00:05
    assert "per-minute limit of 5" in refused.json()["error"]
    frozen.advance(seconds=55)
    again = call(alice)
    assert again.status_code == 200 and again["X-Burst-Remaining"] == "4"
    assert again["X-RateLimit-Remaining"] == str(100 - 6)  # burst refusals took nothing from the day


@pytest.mark.django_db
def test_keyless_callers_get_10_a_day_per_address(client, frozen):
    codes = [client.post("/metered", {}, format="json").status_code for _ in range(10)]
    assert codes == [200] * 10
    refused = client.post("/metered", {}, format="json")
    assert refused.status_code == 429 and refused["X-RateLimit-Limit"] == "10" and "Retry-After" in refused
    other = client.post("/metered", {}, format="json", REMOTE_ADDR="127.0.0.2")
    assert other.status_code == 200 and other.json()["keyless"] is True


@pytest.mark.django_db
def test_credits_pay_after_the_allowance_and_say_so(alice, frozen, monkeypatch):
    small_plan(monkeypatch, daily=2)
    credits_grant(org=alice.org, amount=3, reason="test")
    assert [call(alice).status_code for _ in range(2)] == [200, 200]
    paid = call(alice)
    assert paid.status_code == 200
    assert paid["X-Quota-Source"] == "credits" and paid["X-Credits-Remaining"] == "2"
    assert [call(alice).status_code for _ in range(3)] == [200, 200, 429]
    assert CreditBalance.objects.get(org=alice.org).balance == 0


@pytest.mark.django_db
def test_a_batch_that_does_not_fit_is_refused_whole_and_takes_nothing(alice, frozen, monkeypatch):
    small_plan(monkeypatch, daily=10)
    assert call(alice, units=7).status_code == 200
    refused = call(alice, units=5)
    assert refused.status_code == 429
    assert Allowance.objects.get(subject=f"org:{alice.org.pk}").used == 7
    credits_grant(org=alice.org, amount=2, reason="test")
    split = call(alice, units=5)
    assert split.status_code == 200 and split["X-Quota-Source"] == "credits"
    assert Allowance.objects.get(subject=f"org:{alice.org.pk}").used == 10
    assert CreditBalance.objects.get(org=alice.org).balance == 0


@pytest.mark.django_db
def test_a_failed_request_is_not_charged(alice, frozen, monkeypatch):
    small_plan(monkeypatch, daily=10)
    credits_grant(org=alice.org, amount=5, reason="test")
    call(alice, units=8)
    failed = call(alice, units=4, fail=True)
    assert failed.status_code == 400
    assert Allowance.objects.get(subject=f"org:{alice.org.pk}").used == 8
    assert CreditBalance.objects.get(org=alice.org).balance == 5
    usage = alice.client.get("/api/v1/usage?days=1").json()
    assert usage["days"][0]["guardrails"] == 8


@pytest.mark.django_db
def test_an_idempotent_replay_is_not_charged_again(alice, frozen):
    first = alice.client.post("/metered", {"units": 1}, format="json", HTTP_IDEMPOTENCY_KEY="once")
    again = alice.client.post("/metered", {"units": 1}, format="json", HTTP_IDEMPOTENCY_KEY="once")
    assert again["Idempotency-Replayed"] == "true"
    assert again["X-RateLimit-Remaining"] == first["X-RateLimit-Remaining"] == "249"
    assert Allowance.objects.get(subject=f"org:{alice.org.pk}").used == 1


@pytest.mark.django_db
def test_atlas_lookups_have_their_own_tier_limits_and_headers(alice, client, frozen):
    keyed = alice.client.get("/lookup")
    assert keyed["X-Atlas-Lookup-Limit"] == "100" and keyed["X-Atlas-Lookup-Remaining"] == "99"
    assert "X-Burst-Limit" not in keyed
    alice.org.atlas_tier = "pro"
    alice.org.save()
    assert alice.client.get("/lookup")["X-Atlas-Lookup-Limit"] == "10000"
    assert [client.get("/lookup").status_code for _ in range(11)] == [200] * 10 + [429]
    assert call(alice)["X-RateLimit-Remaining"] == "249"  # lookups do not spend evaluations


@pytest.mark.django_db
def test_usage_reports_daily_counts_per_product_and_remaining_quota(alice, bob, frozen):
    call(alice, units=3)
    alice.client.get("/lookup")
    frozen.advance(days=1)
    call(alice)
    call(bob, units=5)
    usage = alice.client.get("/api/v1/usage?days=2")
    assert usage.status_code == 200
    body = usage.json()
    assert [d["date"] for d in body["days"]] == ["2026-11-23", "2026-11-22"]
    assert body["days"][0]["guardrails"] == 1 and body["days"][1]["guardrails"] == 3 and body["days"][1]["atlas"] == 1
    assert body["today"]["evaluations"] == {"limit": 250, "used": 1, "remaining": 249, "per_minute_limit": 30}
    assert body["credits"] == {"balance": 0}


@pytest.mark.django_db
@pytest.mark.parametrize("query", ["days=0", "days=91", "days=x"])
def test_usage_rejects_a_bad_window(alice, query):
    response = alice.client.get(f"/api/v1/usage?{query}")
    assert response.status_code == 400 and response.json()["error"].startswith("days")


@pytest.mark.django_db
def test_the_plan_catalog_is_public(client):
    body = client.get("/api/v1/plans").json()
    assert body["currency"] == "usd" and body["billing_enabled"] is False
    assert [(p["id"], p["price_monthly_usd"], p["daily_eval_limit"], p["per_minute_limit"]) for p in body["plans"]] == [
        ("free", 0, 250, 30), ("starter", 29, 5000, 120), ("growth", 99, 25000, 300), ("scale", 299, 100000, 600)]
    assert [(t["id"], t["daily_lookup_limit"]) for t in body["atlas_tiers"]] == [("free", 100), ("pro", 10000), ("team", 100000)]
    assert body["plans"][0]["purchasable"] is False


@pytest.mark.django_db(transaction=True)
def test_an_allowance_of_n_admits_exactly_n_of_4n_parallel_requests(live_server, alice, monkeypatch):
    n = 12
    small_plan(monkeypatch, daily=n)
    results = []
    barrier = threading.Barrier(4 * n)

    def fire():
        barrier.wait()
        response = requests.post(f"{live_server.url}/metered", json={"units": 1},
                                 headers={"Authorization": f"Bearer {alice.key}"}, timeout=60)
        results.append((response.status_code, response.headers.get("Retry-After")))

    threads = [threading.Thread(target=fire) for _ in range(4 * n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(code for code, _ in results) == [200] * n + [429] * (3 * n)
    assert all(retry for code, retry in results if code == 429)
    assert Allowance.objects.get(subject=f"org:{alice.org.pk}").used == n
