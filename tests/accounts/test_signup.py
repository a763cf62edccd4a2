import pytest
from django.core import mail
from django.test import override_settings

from accounts.models import ApiKey, AuditEvent, Organization

pytestmark = pytest.mark.django_db


def test_an_empty_signup_returns_a_key_that_identifies_the_new_org(client):
    response = client.post("/api/v1/signup", {}, format="json")
    assert response.status_code == 201
    body = response.json()
    assert body["api_key"].startswith("svc_live_")
    assert body["key_shown_once"] is True
    assert body["organization"]["has_login"] is False
    me = client.get("/api/v1/me", HTTP_AUTHORIZATION=f"Bearer {body['api_key']}")
    assert me.status_code == 200
    assert me.json()["organization"]["id"] == body["organization"]["id"]
    assert me.json()["key"]["prefix"] == body["api_key"][:15]


def test_a_signup_with_no_body_at_all_also_makes_an_agents_account(client):
    response = client.post("/api/v1/signup")
    assert response.status_code == 201
    assert response.json()["api_key"].startswith("svc_live_")


def test_the_key_is_stored_only_as_a_hash(client):
    raw = client.post("/api/v1/signup", {}, format="json").json()["api_key"]
    key = ApiKey.objects.get()
    assert raw not in (key.key_hash, key.prefix)
    assert raw[len(key.prefix):] not in str(ApiKey.objects.values().get())


def test_signup_with_an_email_is_503_when_not_enabled(client):
    response = client.post("/api/v1/signup", {"email": "a@example.com", "password": "correct horse battery"}, format="json")
    assert response.status_code == 503
    assert "not enabled" in response.json()["error"]
    assert Organization.objects.count() == 0


@override_settings(SIGNUP_EMAIL_ENABLED=True)
def test_signup_with_an_email_makes_an_account_with_a_login_and_a_taken_email_is_409(client):
    body = {"email": "Ann@Example.com", "password": "correct horse battery", "org_name": "Ann's shop"}
    first = client.post("/api/v1/signup", body, format="json")
    assert first.status_code == 201
    assert first.json()["organization"]["has_login"] is True
    assert first.json()["organization"]["name"] == "Ann's shop"
    again = client.post("/api/v1/signup", {**body, "email": "ann@example.com"}, format="json")
    assert again.status_code == 409
    assert "already registered" in again.json()["error"]


@pytest.mark.parametrize(
    "body, field",
    [
        ({"email": "not-an-email", "password": "correct horse battery"}, "email"),
        ({"email": "a@example.com", "password": "short"}, "password"),
        ({"email": "a@example.com", "password": "x" * 129}, "password"),
        ({"org_name": "x" * 201}, "org_name"),
        ({"email": "a@example.com"}, "email and password"),
    ],
)
def test_invalid_signup_bodies_are_400_naming_the_field(client, body, field):
    response = client.post("/api/v1/signup", body, format="json")
    assert response.status_code == 400
    assert field in response.json()["error"]


def test_signups_from_one_address_are_throttled_with_retry_after(client, settings):
    settings.SIGNUP_RATE = "3/h"
    codes = [client.post("/api/v1/signup", {}, format="json").status_code for _ in range(4)]
    assert codes == [201, 201, 201, 429]
    refused = client.post("/api/v1/signup", {}, format="json")
    assert int(refused["Retry-After"]) > 0
    assert "Too many signups" in refused.json()["error"]
    other = client.post("/api/v1/signup", {}, format="json", REMOTE_ADDR="127.0.0.9")
    assert other.status_code == 201


@override_settings(SIGNUP_EMAIL_ENABLED=True)
def test_claiming_an_agents_account_adds_a_login_and_keeps_keys(alice):
    response = alice.client.post("/api/v1/org/claim", {"email": "ops@alice.example", "password": "correct horse battery"}, format="json")
    assert response.status_code == 201
    assert response.json()["has_login"] is True
    assert alice.client.get("/api/v1/me").status_code == 200
    assert len(mail.outbox) == 1 and mail.outbox[0].to == ["ops@alice.example"]
    again = alice.client.post("/api/v1/org/claim", {"email": "other@alice.example", "password": "correct horse battery"}, format="json")
    assert again.status_code == 409
    assert AuditEvent.objects.filter(org=alice.org, action="accounts.org.claimed").count() == 1


def test_claiming_is_503_when_email_accounts_are_not_enabled(alice):
    response = alice.client.post("/api/v1/org/claim", {"email": "ops@alice.example", "password": "correct horse battery"}, format="json")
    assert response.status_code == 503
