import pytest

from tests.tower.helpers import act, agent_client
from tower.models import LegacyCustomer, LegacyOrder, PolicyRule
from tower.template import SAMPLES

pytestmark = pytest.mark.django_db


def test_loading_the_template_is_201_then_200_and_loads_once(alice):
    first = alice.client.post("/api/v1/tower/template")
    assert first.status_code == 201
    assert first.json()["slug"] == "email-purchase-order-to-order-entry" and first.json()["customers"] == 4
    again = alice.client.post("/api/v1/tower/template")
    assert again.status_code == 200 and again.json() == first.json()
    assert LegacyCustomer.objects.filter(org=alice.org).count() == 4
    assert PolicyRule.objects.filter(org=alice.org, name="large-order").count() == 1


def test_the_template_needs_an_organization_key(alice):
    bot = agent_client(alice)
    assert bot.post("/api/v1/tower/template").status_code == 401


def parse(agent, name):
    response = act(agent, "parse_purchase_order", {"email": (SAMPLES / name).read_text()}, f"parse-{name}")
    assert response.status_code == 200, response.content
    return response.json()["result"]


def test_a_table_email_becomes_an_order_that_is_executed(shop):
    parsed = parse(shop.agent, "po_table.txt")
    assert parsed["customer"] == {"customer": "C-1001", "name": "Alpenbau GmbH"}
    assert parsed["reference"] == "PO-88231" and parsed["ready"] is True
    assert [(line["sku"], line["quantity"]) for line in parsed["lines"]] == [("BOLT-M8", 200), ("NUT-M8", 200), ("WASH-M8", 400)]
    created = act(shop.agent, "create_sales_order", parsed["order_input"], "from-email")
    assert created.status_code == 200
    assert LegacyOrder.objects.get(number=created.json()["result"]["order"]).reference == "PO-88231"


def test_an_eml_with_a_csv_attachment_is_parsed(shop):
    parsed = parse(shop.agent, "po_csv.eml")
    assert parsed["customer"]["customer"] == "C-1002" and parsed["reference"] == "5521"
    assert [(line["sku"], line["quantity"]) for line in parsed["lines"]] == [("SCREW-5x60", 500), ("BRKT-90", 40)]


def test_a_large_email_order_goes_to_review(shop):
    parsed = parse(shop.agent, "po_large.txt")
    assert parsed["customer"]["customer"] == "C-1003" and parsed["estimated_total"] == "1898.00"
    assert act(shop.agent, "create_sales_order", parsed["order_input"], "large").status_code == 202


def test_an_email_from_an_unknown_buyer_is_not_ready(shop):
    parsed = parse(shop.agent, "po_unknown.txt")
    assert parsed["customer"] is None and parsed["order_input"] is None and parsed["ready"] is False


def test_the_subscription_shows_quota_and_usage(shop):
    act(shop.agent, "find_customer", {"query": "a"}, "one")
    body = shop.client.get("/api/v1/tower/subscription").json()
    assert body["status"] == "pilot" and body["usage"]["actions"]["used"] == 1
    assert body["quota"]["actions_per_month"] == 5000 and body["billing_enabled"] is False


def test_checkout_and_cancel_answer_503_while_billing_is_off(alice, settings):
    settings.BILLING_ENABLED = False
    checkout = alice.client.post("/api/v1/tower/checkout")
    assert checkout.status_code == 503 and checkout.json()["code"] == "billing_disabled"
    assert alice.client.delete("/api/v1/tower/subscription").status_code == 503
