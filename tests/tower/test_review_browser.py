"""The review flow in a real browser: a staff user signs in to the admin, approves a held action, and
the order appears in the legacy system with its receipts. Needs Playwright and a Chromium on the
machine (Debian's `chromium`); skipped without them."""

import shutil

import pytest
from django.contrib.auth import get_user_model

from tests.tower.helpers import small_order
from tower import services
from tower.models import Action, LegacyOrder

playwright_api = pytest.importorskip("playwright.sync_api")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on this machine"),
]


def test_a_staff_user_approves_a_held_action_in_the_admin(alice, live_server, monkeypatch):
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # the ORM below runs beside Playwright's event loop
    services.template_load(org=alice.org)
    agent = services.agent_create(org=alice.org, name="order-bot", scopes=["*"]).agent
    held = services.action_create(org=alice.org, agent=agent, operation="create_sales_order",
                                  input=small_order(quantity=4000), idempotency_key="browser")
    assert held.status == 202
    action_id = held.body["id"]
    get_user_model().objects.create_superuser("reviewer", "reviewer@example.com", "correct horse battery staple")

    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page()
        page.goto(f"{live_server.url}/admin/login/?next=/admin/tower/reviewqueueitem/")
        page.fill("#id_username", "reviewer")
        page.fill("#id_password", "correct horse battery staple")
        page.click("input[type=submit]")
        page.wait_for_url("**/admin/tower/reviewqueueitem/")
        row = page.locator("#result_list tr", has_text=action_id)
        assert "Orders over 1000.00" in row.inner_text()
        row.locator("input.action-select").check()
        page.select_option("select[name=action]", "approve_actions")
        page.click("button[name=index]")
        page.wait_for_selector(".messagelist")
        assert "1 action(s) approved." in page.inner_text(".messagelist")
        assert action_id not in page.inner_text("body")
        page.goto(f"{live_server.url}/admin/tower/action/{action_id}/change/")
        assert "reviewer" in page.inner_text("body")
        browser.close()

    action = Action.objects.get(pk=action_id)
    assert action.state == "executed" and action.reviewer == "reviewer"
    order = LegacyOrder.objects.get(external_ref=action_id)
    assert order.lines.get().quantity == 4000
    assert [r.kind for r in action.receipts.order_by("sequence")] == ["decision", "reviewed", "executed"]
    assert services.receipts_verify(org=alice.org)["ok"] is True
