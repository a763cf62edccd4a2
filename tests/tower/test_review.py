import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from accounts.models import AuditEvent, WebhookEvent
from accounts.webhooks import webhook_set
from tests.tower.helpers import act, small_order
from tower import services
from tower.models import Action, LegacyOrder, PolicyRule

pytestmark = pytest.mark.django_db


@pytest.fixture
def held(shop):
    webhook_set(org=shop.org, url="http://localhost:9/hook")
    response = act(shop.agent, "create_sales_order", small_order(quantity=4000), "big")
    assert response.status_code == 202
    return response.json()["id"]


@pytest.fixture
def staff():
    user = get_user_model().objects.create_superuser("reviewer@example.com", "reviewer@example.com", "a long password 123")
    client = Client()
    client.force_login(user)
    return client


def test_approving_in_the_admin_executes_the_action_with_receipts_audit_and_webhook(shop, held, staff):
    queue = staff.get("/admin/tower/reviewqueueitem/")
    assert queue.status_code == 200 and held in queue.content.decode()
    assert "Orders over 1000.00" in queue.content.decode()
    detail = staff.get(f"/admin/tower/reviewqueueitem/{held}/change/").content.decode()
    assert "BOLT-M8" in detail and "large-order" in detail

    response = staff.post("/admin/tower/reviewqueueitem/", {"action": "approve_actions", "_selected_action": [held]}, follow=True)
    assert response.status_code == 200

    action = shop.agent.get(f"/api/v1/tower/actions/{held}").json()
    assert action["state"] == "executed" and action["review"]["reviewer"] == "reviewer@example.com"
    assert [r["kind"] for r in action["receipts"]] == ["decision", "reviewed", "executed"]
    assert LegacyOrder.objects.get(external_ref=held).lines.get().quantity == 4000
    assert AuditEvent.objects.filter(action="tower.action.approved", target=held, actor="reviewer@example.com").exists()
    assert WebhookEvent.objects.filter(type="tower.action.executed", data__action_id=held).exists()
    assert held not in staff.get("/admin/tower/reviewqueueitem/").content.decode()
    assert services.receipts_verify(org=shop.org)["ok"] is True


def test_declining_refuses_the_action(shop, held, staff):
    staff.post("/admin/tower/reviewqueueitem/", {"action": "decline_actions", "_selected_action": [held]})
    action = Action.objects.get(pk=held)
    assert action.state == "declined" and action.reviewer == "reviewer@example.com"
    assert not LegacyOrder.objects.exists()
    assert [r.kind for r in action.receipts.order_by("sequence")] == ["decision", "reviewed"]
    assert AuditEvent.objects.filter(action="tower.action.declined", target=held).exists()
    assert WebhookEvent.objects.filter(type="tower.action.rejected", data__action_id=held).exists()
    assert shop.agent.post(f"/api/v1/tower/actions/{held}/compensate").status_code == 409


def test_a_review_is_resolved_once(shop, held):
    services.action_review(action_id=held, approve=False, reviewer="a")
    with pytest.raises(Exception) as caught:
        services.action_review(action_id=held, approve=True, reviewer="b")
    assert getattr(caught.value, "status", None) == 409
    assert Action.objects.get(pk=held).state == "declined"


def test_an_approved_action_the_erp_then_refuses_is_failed(shop, held):
    from tower.models import LegacyProduct

    LegacyProduct.objects.filter(sku="BOLT-M8").update(stock=5)
    action = services.action_review(action_id=held, approve=True, reviewer="r")
    assert action.state == "failed" and "stock" in action.error


def test_an_operator_edits_a_policy_rule_in_the_admin(shop, staff):
    from tests.tower.helpers import small_order as order

    rule = PolicyRule.objects.get(org=shop.org, name="large-order")
    page = staff.get(f"/admin/tower/policyrule/{rule.pk}/change/")
    assert page.status_code == 200
    staff.post(f"/admin/tower/policyrule/{rule.pk}/change/", {
        "org": str(shop.org.pk), "name": rule.name, "operation": rule.operation, "fact": rule.fact, "comparator": "gt",
        "value": "2", "decision": "review", "message": rule.message, "enabled": "on"})
    assert PolicyRule.objects.get(pk=rule.pk).value == "2"
    assert act(shop.agent, "create_sales_order", order(quantity=10), "now-reviewed").status_code == 202
