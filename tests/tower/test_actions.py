import pytest

from accounts.models import AuditEvent, WebhookEvent
from accounts.webhooks import webhook_set
from tests.tower.helpers import act, agent_client, small_order
from tower.models import Action, LegacyOrder, LegacyProduct, Receipt

pytestmark = pytest.mark.django_db


def stock(sku="BOLT-M8") -> int:
    return LegacyProduct.objects.get(sku=sku).stock


def test_an_auto_action_is_executed_with_its_order_and_receipts(shop):
    before = stock()
    response = act(shop.agent, "create_sales_order", small_order(quantity=10), "k1")
    assert response.status_code == 200
    body = response.json()
    assert body["state"] == "executed" and body["decision"] == "auto"
    assert body["result"]["total"] == "3.50" and body["compensable"] is True
    assert [r["kind"] for r in body["receipts"]] == ["decision", "executed"]
    assert [r["sequence"] for r in body["receipts"]] == [1, 2]
    order = LegacyOrder.objects.get(number=body["result"]["order"])
    assert order.external_ref == body["id"] and stock() == before - 10


def test_a_large_order_is_held_for_review_with_a_202(shop):
    webhook_set(org=shop.org, url="http://localhost:9/hook")
    response = act(shop.agent, "create_sales_order", small_order(quantity=4000), "big")
    assert response.status_code == 202
    body = response.json()
    assert body["state"] == "pending_review" and body["decision"] == "review"
    assert body["reasons"][0]["rule"] == "large-order"
    assert not LegacyOrder.objects.exists()
    assert WebhookEvent.objects.filter(type="tower.action.pending_review", data__action_id=body["id"]).exists()


@pytest.mark.parametrize("order, rule", [
    (small_order(customer="C-9999"), "unknown-customer"),
    (small_order(customer="C-1004"), "credit-hold"),
    (small_order(sku="NOPE-1"), "unknown-product"),
    (small_order(sku="DRILL-18V", quantity=26), "over-stock"),
])
def test_a_policy_rejection_is_a_422_whose_body_is_the_action(shop, order, rule):
    response = act(shop.agent, "create_sales_order", order, f"r-{rule}")
    assert response.status_code == 422
    body = response.json()
    assert body["code"] == "policy_rejected" and body["error"].startswith("Refused by policy")
    assert body["state"] == "rejected" and body["id"].startswith("act_")
    assert rule in [r["rule"] for r in body["reasons"]]
    assert [r["kind"] for r in body["receipts"]] == ["decision", "rejected"]
    assert shop.agent.get(f"/api/v1/tower/actions/{body['id']}").json()["state"] == "rejected"
    assert not LegacyOrder.objects.exists()


def test_the_same_key_and_body_give_the_same_action(shop):
    first = act(shop.agent, "create_sales_order", small_order(), "same")
    again = act(shop.agent, "create_sales_order", small_order(), "same")
    assert again.status_code == 200 and again["Idempotency-Replayed"] == "true"
    assert again.json() == first.json()
    assert Action.objects.count() == 1 and LegacyOrder.objects.count() == 1


def test_a_rejection_is_replayed_too(shop):
    first = act(shop.agent, "create_sales_order", small_order(customer="C-9999"), "rej")
    again = act(shop.agent, "create_sales_order", small_order(customer="C-9999"), "rej")
    assert again.status_code == 422 and again.json()["id"] == first.json()["id"]


def test_the_same_key_with_another_body_is_a_422(shop):
    act(shop.agent, "create_sales_order", small_order(quantity=1), "k")
    response = act(shop.agent, "create_sales_order", small_order(quantity=2), "k")
    assert response.status_code == 422
    assert response.json()["code"] == "idempotency_mismatch"
    assert Action.objects.count() == 1


def test_keys_are_per_agent(shop):
    other = agent_client(shop, name="other")
    a = act(shop.agent, "create_sales_order", small_order(), "k")
    b = act(other, "create_sales_order", small_order(), "k")
    assert a.json()["id"] != b.json()["id"]


def test_a_key_still_running_is_a_409(shop):
    from core import idempotency
    from core.idempotency import request_fingerprint

    fingerprint = request_fingerprint("tower.action", "create_sales_order", small_order())
    idempotency.idempotency_begin(scope=f"tower-agent:{shop.agent.agent.id}", key="busy", fingerprint=fingerprint)
    response = act(shop.agent, "create_sales_order", small_order(), "busy")
    assert response.status_code == 409 and response.json()["code"] == "idempotency_in_progress"


def test_a_dry_run_decides_and_changes_nothing(shop):
    before = stock()
    response = act(shop.agent, "create_sales_order", small_order(quantity=4000), "dry", dry_run=True)
    assert response.status_code == 200
    body = response.json()
    assert body["dry_run"] is True and body["state"] == "dry_run" and body["decision"] == "review" and body["id"] is None
    assert not Action.objects.exists() and not Receipt.objects.exists() and stock() == before
    # The key was not claimed: the real request may use it.
    assert act(shop.agent, "create_sales_order", small_order(quantity=4000), "dry").status_code == 202


@pytest.mark.parametrize("input, field", [
    ({"customer": "C-1001"}, "input"),
    ({"customer": "C-1001", "lines": []}, "input/lines"),
    ({"customer": "C-1001", "lines": [{"sku": "BOLT-M8", "quantity": 0}]}, "input/lines/0/quantity"),
    ({"customer": "C-1001", "lines": [{"sku": "BOLT-M8", "quantity": "3"}]}, "input/lines/0/quantity"),
    ({"customer": "nobody", "lines": [{"sku": "BOLT-M8", "quantity": 1}]}, "input/customer"),
    ({**small_order(), "extra": 1}, "input"),
])
def test_an_input_that_breaks_the_schema_is_a_400_naming_the_field_and_changes_nothing(shop, input, field):
    response = act(shop.agent, "create_sales_order", input, "bad")
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "input_invalid" and body["field"] == field and body["error"].startswith(field)
    assert not Action.objects.exists() and not Receipt.objects.exists()


def test_an_unknown_operation_is_a_400(shop):
    response = act(shop.agent, "launch_rockets", {}, "x")
    assert response.status_code == 400 and response.json()["code"] == "unknown_operation"


def test_an_operation_out_of_scope_is_a_403_and_changes_nothing(shop):
    reader = agent_client(shop, scopes=["find_customer"], name="reader")
    response = act(reader, "create_sales_order", small_order(), "x")
    assert response.status_code == 403 and response.json()["code"] == "out_of_scope"
    assert not Action.objects.exists()


def test_an_organization_key_cannot_request_actions(shop):
    response = act(shop.client, "create_sales_order", small_order(), "x")
    assert response.status_code == 403 and response.json()["code"] == "agent_key_required"


def test_a_revoked_agent_cannot_act(shop):
    shop.client.delete(f"/api/v1/tower/agents/{shop.agent.agent.id}")
    assert act(shop.agent, "create_sales_order", small_order(), "x").status_code == 401
    assert not Action.objects.exists()


def test_a_bad_idempotency_key_is_a_400(shop):
    response = act(shop.agent, "create_sales_order", small_order(), "has spaces")
    assert response.status_code == 400 and "idempotency_key" in response.json()["error"]
    assert act(shop.agent, "create_sales_order", small_order(), "x" * 129).status_code == 400


def test_a_read_runs_automatically(shop):
    response = act(shop.agent, "find_customer", {"query": "alpen"}, "read")
    assert response.status_code == 200
    assert response.json()["result"]["customers"][0]["customer"] == "C-1001"


def test_the_monthly_quota_is_a_429(shop, settings):
    settings.TOWER_ACTIONS_PER_MONTH = 1
    assert act(shop.agent, "find_customer", {"query": "a"}, "q1").status_code == 200
    response = act(shop.agent, "find_customer", {"query": "a"}, "q2")
    assert response.status_code == 429 and response.json()["code"] == "monthly_quota" and response["Retry-After"]
    assert Action.objects.count() == 1


def test_an_agent_reads_its_own_actions_and_the_organization_reads_all(shop):
    action_id = act(shop.agent, "create_sales_order", small_order(), "k").json()["id"]
    other = agent_client(shop, name="other")
    assert shop.agent.get(f"/api/v1/tower/actions/{action_id}").status_code == 200
    assert shop.client.get(f"/api/v1/tower/actions/{action_id}").status_code == 200
    assert other.get(f"/api/v1/tower/actions/{action_id}").status_code == 404


def test_compensating_an_order_cancels_it_and_gives_the_stock_back_once(shop):
    before = stock()
    action_id = act(shop.agent, "create_sales_order", small_order(quantity=10), "k").json()["id"]
    first = shop.agent.post(f"/api/v1/tower/actions/{action_id}/compensate")
    assert first.status_code == 200
    assert first.json()["state"] == "compensated" and first.json()["compensation"]["status"] == "cancelled"
    again = shop.agent.post(f"/api/v1/tower/actions/{action_id}/compensate")
    assert again.status_code == 200 and again.json() == first.json()
    assert stock() == before
    assert Receipt.objects.filter(action_id=action_id, kind="compensated").count() == 1
    assert AuditEvent.objects.filter(action="tower.action.compensated", target=action_id).count() == 1


def test_a_quantity_change_is_compensated_back_to_the_previous_quantity(shop):
    order = act(shop.agent, "create_sales_order", small_order(quantity=10), "k").json()["result"]["order"]
    change = act(shop.agent, "change_order_quantity", {"order": order, "sku": "BOLT-M8", "quantity": 30}, "c")
    assert change.status_code == 200 and change.json()["result"]["previous_quantity"] == 10
    undone = shop.agent.post(f"/api/v1/tower/actions/{change.json()['id']}/compensate")
    assert undone.status_code == 200
    assert undone.json()["compensation"]["lines"][0]["quantity"] == 10


def test_a_rejected_or_uncompensable_action_is_a_409(shop):
    rejected = act(shop.agent, "create_sales_order", small_order(customer="C-9999"), "r").json()["id"]
    response = shop.agent.post(f"/api/v1/tower/actions/{rejected}/compensate")
    assert response.status_code == 409 and response.json()["code"] == "not_compensable"
    found = act(shop.agent, "find_customer", {"query": "a"}, "f").json()["id"]
    assert shop.agent.post(f"/api/v1/tower/actions/{found}/compensate").status_code == 409


def test_another_tenant_cannot_see_or_compensate_an_action(shop, bob):
    action_id = act(shop.agent, "create_sales_order", small_order(), "k").json()["id"]
    assert bob.client.get(f"/api/v1/tower/actions/{action_id}").status_code == 404
    assert bob.client.post(f"/api/v1/tower/actions/{action_id}/compensate").status_code == 404
    assert Action.objects.get(pk=action_id).state == "executed"


def test_decide_returns_the_decision_with_reasons_and_changes_nothing(shop):
    response = shop.agent.post("/api/v1/tower/decide", {"operation": "create_sales_order", "input": small_order(quantity=4000)},
                               format="json")
    assert response.status_code == 200
    body = response.json()
    assert body["decision"] == "review" and body["reasons"][0]["rule"] == "large-order"
    assert body["facts"]["order_total"] == "1400.00"
    assert not Action.objects.exists() and not Receipt.objects.exists()


def test_decide_out_of_scope_is_a_403(shop):
    reader = agent_client(shop, scopes=["find_customer"], name="reader")
    response = reader.post("/api/v1/tower/decide", {"operation": "create_sales_order", "input": small_order()}, format="json")
    assert response.status_code == 403 and response.json()["code"] == "out_of_scope"


def test_decide_needs_both_fields(shop):
    response = shop.agent.post("/api/v1/tower/decide", {"operation": "create_sales_order"}, format="json")
    assert response.status_code == 400 and response.json()["error"].startswith("input")


def test_the_decision_quota_is_a_429(shop, settings):
    settings.TOWER_DECISIONS_PER_DAY = 2
    body = {"operation": "find_customer", "input": {"query": "a"}}
    for _ in range(2):
        assert shop.agent.post("/api/v1/tower/decide", body, format="json").status_code == 200
    response = shop.agent.post("/api/v1/tower/decide", body, format="json")
    assert response.status_code == 429 and response.json()["code"] == "decision_quota"
    assert int(response["Retry-After"]) > 0


def test_an_execution_the_erp_refuses_is_a_failed_action_with_a_receipt(shop):
    from tower.models import PolicyRule

    PolicyRule.objects.filter(org=shop.org, name="over-stock").update(enabled=False)
    LegacyProduct.objects.filter(sku="DRILL-18V").update(stock=5)
    response = act(shop.agent, "create_sales_order", small_order(sku="DRILL-18V", quantity=6), "k")
    assert response.status_code == 422
    body = response.json()
    assert body["code"] == "execution_failed" and body["state"] == "failed" and "stock" in body["error"]
    assert [r["kind"] for r in body["receipts"]] == ["decision", "failed"]
    assert not LegacyOrder.objects.exists() and stock("DRILL-18V") == 5


def test_a_crash_while_appending_the_receipt_leaves_neither_the_effect_nor_the_receipt(shop, monkeypatch):
    from tower import services

    before = stock()

    def crash(**kwargs):
        raise RuntimeError("the process died here")

    monkeypatch.setattr(services, "receipts_append", crash)
    with pytest.raises(RuntimeError):
        services.action_create(org=shop.org, agent=shop.agent.agent, operation="create_sales_order",
                               input=small_order(quantity=10), idempotency_key="crash")
    assert stock() == before and not LegacyOrder.objects.exists()
    assert not Action.objects.exists() and not Receipt.objects.exists()
    monkeypatch.undo()
    # The key was freed and the monthly unit given back: the retry runs.
    assert act(shop.agent, "create_sales_order", small_order(quantity=10), "crash").status_code == 200
    assert services.quota_usage(org=shop.org)["actions"]["used"] == 1
