import pytest

from accounts.models import AuditEvent
from accounts.services import api_key_issue

pytestmark = pytest.mark.django_db


def test_a_new_key_is_shown_once_and_listed_by_prefix_only(alice):
    created = alice.client.post("/api/v1/api-keys", {"name": "ci", "scope": "evaluate"}, format="json")
    assert created.status_code == 201
    raw = created.json()["key"]
    assert raw.startswith("svc_live_") and created.json()["scope"] == "evaluate"
    listed = alice.client.get("/api/v1/api-keys").json()["api_keys"]
    assert {k["name"] for k in listed} == {"default", "ci"}
    assert raw not in str(listed)
    assert all("key" not in k for k in listed)


@pytest.mark.parametrize("body, message", [({}, "name"), ({"name": "x" * 101}, "name"), ({"name": "a", "scope": "admin"}, "scope")])
def test_a_bad_key_request_is_400_naming_the_field(alice, body, message):
    response = alice.client.post("/api/v1/api-keys", body, format="json")
    assert response.status_code == 400
    assert response.json()["error"].startswith(message)


def test_the_active_key_limit_is_409(alice, settings):
    settings.API_KEYS_MAX_ACTIVE = 3
    codes = [alice.client.post("/api/v1/api-keys", {"name": f"k{i}"}, format="json").status_code for i in range(3)]
    assert codes == [201, 201, 409]
    assert "active keys" in alice.client.post("/api/v1/api-keys", {"name": "x"}, format="json").json()["error"]


def test_a_revoked_key_gets_401_at_once_and_the_rejection_is_audited(alice):
    issued = api_key_issue(org=alice.org, name="temp")
    from rest_framework.test import APIClient

    other = APIClient()
    other.credentials(HTTP_AUTHORIZATION=f"Bearer {issued.raw}")
    assert other.get("/api/v1/me").status_code == 200
    revoked = alice.client.delete(f"/api/v1/api-keys/{issued.key.pk}")
    assert revoked.status_code == 200
    assert revoked.json() == {"id": str(issued.key.pk), "is_active": False}
    refused = other.get("/api/v1/me")
    assert refused.status_code == 401
    assert refused.json() == {"error": "A valid API key is required: send Authorization: Bearer <API_KEY>."}
    assert refused["WWW-Authenticate"].startswith("Bearer")
    actions = list(AuditEvent.objects.filter(org=alice.org).values_list("action", flat=True))
    assert "accounts.key.revoked" in actions and "accounts.key.rejected" in actions


def test_revoking_an_unknown_key_is_404(alice):
    response = alice.client.delete("/api/v1/api-keys/00000000-0000-0000-0000-000000000000")
    assert response.status_code == 404


@pytest.mark.parametrize("header", ["Bearer svc_live_nope", "Bearer ", "Basic dXNlcjpwYXNz", "svc_live_x", "Bearer sk_live_123"])
def test_a_malformed_or_unknown_key_is_401(client, header):
    response = client.get("/api/v1/me", HTTP_AUTHORIZATION=header)
    assert response.status_code == 401
    assert set(response.json()) == {"error"}


def test_an_evaluate_key_is_refused_on_full_scope_routes(alice):
    issued = api_key_issue(org=alice.org, name="eval-only", scope="evaluate")
    from rest_framework.test import APIClient

    limited = APIClient()
    limited.credentials(HTTP_AUTHORIZATION=f"Bearer {issued.raw}")
    assert limited.get("/api/v1/me").status_code == 200
    for method, path in [("get", "/api/v1/org"), ("patch", "/api/v1/org"), ("delete", "/api/v1/org"), ("get", "/api/v1/api-keys"),
                         ("post", "/api/v1/api-keys"), ("get", "/api/v1/audit-log")]:
        response = getattr(limited, method)(path, {}, format="json")
        assert response.status_code == 403, (method, path)
        assert "scope" in response.json()["error"]
