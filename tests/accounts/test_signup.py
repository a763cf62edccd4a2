import pytest

pytestmark = pytest.mark.django_db


def test_an_empty_signup_returns_a_key_that_identifies_the_new_org(client):
    response = client.post("/api/v1/signup", {}, format="json")
    assert response.status_code == 201
    body = response.json()
    assert body["api_key"].startswith("svc_live_")
    assert body["key_shown_once"] is True
    me = client.get("/api/v1/me", HTTP_AUTHORIZATION=f"Bearer {body['api_key']}")
    assert me.status_code == 200
    assert me.json()["organization"]["id"] == body["organization"]["id"]
    assert me.json()["key"]["prefix"] == body["api_key"][:15]
