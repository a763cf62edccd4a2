import pytest
from rest_framework.test import APIClient

from tests.tower.helpers import agent_client
from tower.models import Agent

pytestmark = pytest.mark.django_db


def test_creating_an_agent_returns_its_key_once_and_listing_never_does(alice):
    created = alice.client.post("/api/v1/tower/agents", {"name": "order bot", "scopes": ["create_sales_order", "find_customer"]},
                                format="json")
    assert created.status_code == 201
    body = created.json()
    assert body["key"].startswith("svc_agent_") and body["key_shown_once"] is True
    assert body["key"].startswith(body["prefix"])
    listed = alice.client.get("/api/v1/tower/agents").json()
    assert listed["active_limit"] == 25
    assert [a["id"] for a in listed["agents"]] == [body["id"]]
    assert "key" not in listed["agents"][0]
    assert body["key"] not in str(listed)


@pytest.mark.parametrize("scopes, message", [
    ([], "scopes"),
    (["Create"], "scopes"),
    (["a" * 65], "scopes"),
    (["x"] * 51, "scopes"),
    ("*", "scopes"),
])
def test_bad_scopes_are_a_400_naming_the_field(alice, scopes, message):
    response = alice.client.post("/api/v1/tower/agents", {"name": "bot", "scopes": scopes}, format="json")
    assert response.status_code == 400
    assert response.json()["error"].startswith(message)
    assert not Agent.objects.exists()


def test_a_long_name_is_a_400(alice):
    response = alice.client.post("/api/v1/tower/agents", {"name": "x" * 101, "scopes": ["*"]}, format="json")
    assert response.status_code == 400 and "name" in response.json()["error"]


def test_the_active_agent_limit_is_a_409(alice, settings):
    settings.TOWER_AGENTS_MAX_ACTIVE = 2
    for n in range(2):
        assert alice.client.post("/api/v1/tower/agents", {"name": f"a{n}", "scopes": ["*"]}, format="json").status_code == 201
    third = alice.client.post("/api/v1/tower/agents", {"name": "a3", "scopes": ["*"]}, format="json")
    assert third.status_code == 409
    assert third.json()["code"] == "agent_limit"


def test_a_revoked_agent_key_fails_at_once(alice):
    bot = agent_client(alice)
    assert bot.get("/api/v1/tower/capabilities").status_code == 200
    revoked = alice.client.delete(f"/api/v1/tower/agents/{bot.agent.id}")
    assert revoked.status_code == 200 and revoked.json()["is_active"] is False
    response = bot.get("/api/v1/tower/capabilities")
    assert response.status_code == 401
    assert set(response.json()) == {"error"}


def test_revoking_an_unknown_or_another_tenants_agent_is_a_404(alice, bob):
    bot = agent_client(bob)
    assert alice.client.delete(f"/api/v1/tower/agents/{bot.agent.id}").status_code == 404
    assert Agent.objects.get(pk=bot.agent.id).is_active


def test_an_agent_key_is_not_an_organization_key(alice):
    bot = agent_client(alice)
    assert bot.get("/api/v1/tower/agents").status_code == 401
    assert bot.get("/api/v1/me").status_code == 401


def test_an_unknown_agent_key_is_a_401(client):
    client.credentials(HTTP_AUTHORIZATION="Bearer svc_agent_" + "x" * 43)
    response = client.get("/api/v1/tower/capabilities")
    assert response.status_code == 401 and response["WWW-Authenticate"].startswith("Bearer")


def test_capabilities_list_only_the_agents_operations_with_their_schemas(alice):
    bot = agent_client(alice, scopes=["find_customer", "create_sales_order"])
    body = bot.get("/api/v1/tower/capabilities").json()
    assert body["agent_id"] == str(bot.agent.id)
    by_name = {op["name"]: op for op in body["operations"]}
    assert set(by_name) == {"find_customer", "create_sales_order"}
    assert by_name["create_sales_order"]["input_schema"]["required"] == ["customer", "lines"]
    assert by_name["create_sales_order"]["compensable"] is True
    assert by_name["find_customer"]["kind"] == "read"


def test_the_organization_key_sees_every_operation(alice):
    names = {op["name"] for op in alice.client.get("/api/v1/tower/capabilities").json()["operations"]}
    assert {"find_customer", "create_sales_order", "cancel_sales_order", "parse_purchase_order"} <= names


def test_capabilities_without_a_key_is_a_401():
    assert APIClient().get("/api/v1/tower/capabilities").status_code == 401
