"""The registration state machine against a real DNS server and a real HTTP server on loopback."""

import pytest

from accounts.models import AuditEvent
from atlas import services
from atlas.models import Agent, Registration
from core import safe_http
from tests.accounts.proof_servers import LoopbackDns, WellKnownFiles
from tests.conftest import make_tenant

pytestmark = pytest.mark.django_db

DOMAINS = ("acme-agents.com", "other-agents.com", "third-agents.com")


@pytest.fixture(autouse=True)
def dns(settings, fake_dns):
    fake_dns({name: ["127.0.0.1"] for name in DOMAINS})
    server = LoopbackDns()
    settings.DOMAIN_PROOF_NAMESERVERS = [f"127.0.0.1:{server.port}"]
    settings.DOMAIN_PROOF_DNS_TIMEOUT_SECONDS = 2
    yield server
    server.stop()


@pytest.fixture
def web(settings):
    server = WellKnownFiles()
    settings.DOMAIN_PROOF_URLS = [f"http://{{domain}}:{server.port}{{path}}"]
    yield server
    server.stop()


def body(**changes):
    data = {"name": "Acme Fetcher", "operator": "Acme Robotics", "domain": "acme-agents.com", "tokens": ["AcmeFetcher"],
            "purpose": "user_fetch", "user_agent": "Mozilla/5.0 (compatible; AcmeFetcher/1.0; +https://acme-agents.com/bot)",
            "description": "Fetches a page when an Acme user asks for it.", "policy_url": "https://acme-agents.com/bot"}
    data.update(changes)
    return data


def create(tenant, **changes):
    response = tenant.client.post("/api/v1/atlas/registrations", body(**changes), format="json")
    assert response.status_code == 201, response.json()
    return response.json()


def verify(tenant, registration_id):
    return tenant.client.post(f"/api/v1/atlas/registrations/{registration_id}/verify")


def test_a_registration_starts_unverified_with_the_values_to_publish(alice):
    created = create(alice)
    assert created["id"].startswith("areg_") and len(created["id"]) == 21
    assert created["status"] == "pending_verification" and created["tokens"] == ["AcmeFetcher"]
    assert created["verification"]["dns"] == {"type": "TXT", "name": "_svc-atlas.acme-agents.com",
                                              "value": created["verification"]["value"]}
    assert created["verification"]["http"]["url"] == "https://acme-agents.com/.well-known/svc-atlas.txt"
    assert "agent" not in created
    fetched = alice.client.get(f"/api/v1/atlas/registrations/{created['id']}").json()
    assert fetched["verification"] == created["verification"]
    assert AuditEvent.objects.filter(org=alice.org, action="atlas.registration.created").exists()


@pytest.mark.parametrize("changes,field,words", [
    ({"name": ""}, "name", "name"),
    ({"name": "x" * 81}, "name", "80"),
    ({"operator": "o" * 121}, "operator", "120"),
    ({"tokens": []}, "tokens", "tokens"),
    ({"tokens": ["Abcd"]}, "tokens", "5"),
    ({"tokens": ["A" * 61]}, "tokens", "60"),
    ({"tokens": ["AcmeOne", "AcmeTwo", "AcmeThree", "AcmeFour"]}, "tokens", "3"),
    ({"tokens": ["Acme/Fetcher"]}, "tokens", "letters"),
    ({"tokens": ["AcmeFetcher", "acmefetcher"]}, "tokens", "repeat"),
    ({"domain": "localhost"}, "domain", "domain"),
    ({"domain": "https://acme-agents.com/x"}, "domain", "domain"),
    ({"purpose": "spying"}, "purpose", "purpose"),
    ({"user_agent": "u" * 501}, "user_agent", "500"),
    ({"description": "d" * 601}, "description", "600"),
    ({"policy_url": "not a url"}, "policy_url", "policy_url"),
    ({"key_directory_url": "http://acme-agents.com/"}, "key_directory_url", "https"),
])
def test_a_bad_field_is_400_naming_the_field(alice, changes, field, words):
    response = alice.client.post("/api/v1/atlas/registrations", body(**changes), format="json")
    assert response.status_code == 400
    assert response.json()["field"] == field
    assert words in response.json()["error"]


@pytest.mark.parametrize("token", ["GPTBot-Plus", "gptbotx", "PTBot", "MyClaudeBotX"])
def test_a_token_that_contains_or_sits_inside_a_registry_token_is_409(alice, token):
    response = alice.client.post("/api/v1/atlas/registrations", body(tokens=[token]), format="json")
    assert response.status_code == 409
    assert token in response.json()["error"]


def test_a_name_already_in_the_registry_is_409(alice):
    response = alice.client.post("/api/v1/atlas/registrations", body(name="gptbot"), format="json")
    assert response.status_code == 409 and "name" in response.json()["error"]


def test_the_eleventh_registration_is_429(alice):
    for n in range(10):
        create(alice, name=f"Acme {n}", tokens=[f"AcmeAgentNumber{n}"])
    refused = alice.client.post("/api/v1/atlas/registrations", body(name="Acme 10", tokens=["AcmeAgentTen"]), format="json")
    assert refused.status_code == 429 and "10 registrations" in refused.json()["error"]
    listed = alice.client.get("/api/v1/atlas/registrations").json()["registrations"]
    assert [r["name"] for r in listed] == [f"Acme {n}" for n in reversed(range(10))]  # newest first


def test_verify_without_proof_is_422_and_changes_nothing(alice):
    created = create(alice)
    response = verify(alice, created["id"])
    assert response.status_code == 422 and "_svc-atlas.acme-agents.com" in response.json()["error"]
    assert Registration.objects.get(pk=created["id"]).status == "pending_verification"


def test_a_dns_proof_publishes_the_entry_and_lookup_finds_it(alice, dns, client):
    created = create(alice)
    dns.publish("_svc-atlas.acme-agents.com", created["verification"]["value"])
    response = verify(alice, created["id"])
    assert response.status_code == 200, response.json()
    published = response.json()
    assert published["status"] == "published" and "verification" not in published
    assert published["agent"]["agent"] == "Acme Fetcher" and published["agent"]["self_registered"] is True
    assert published["agent"]["operator"] == "Acme Robotics" and published["agent"]["purpose"] == "user_fetch"
    found = client.get("/api/v1/atlas/lookup", {"user_agent": body()["user_agent"]}).json()
    assert found["claim"] == "agent" and found["agent"]["slug"] == published["agent"]["slug"]
    again = verify(alice, created["id"])  # safe to repeat
    assert again.status_code == 200 and again.json()["status"] == "published"
    assert Agent.objects.filter(registration_id=created["id"]).count() == 1


def test_the_well_known_file_proves_the_domain_too(alice, web):
    created = create(alice)
    web.files["acme-agents.com"] = created["verification"]["value"] + "\n"
    with safe_http.allow_loopback():
        response = verify(alice, created["id"])
    assert response.status_code == 200 and response.json()["status"] == "published"
    assert ("acme-agents.com", "/.well-known/svc-atlas.txt") in web.requests


def test_an_operator_name_already_anothers_is_held_for_review_then_approved_or_rejected(alice, dns):
    first = create(alice, operator="openai", tokens=["AcmeShadowAgent"], name="Shadow One")
    second = create(alice, operator="OpenAI", tokens=["AcmeShadowAgentTwo"], name="Shadow Two", domain="other-agents.com")
    for created, domain in ((first, "acme-agents.com"), (second, "other-agents.com")):
        dns.publish(f"_svc-atlas.{domain}", created["verification"]["value"])
        held = verify(alice, created["id"]).json()
        assert held["status"] == "pending_review" and "already listed" in held["note"]
        assert not Agent.objects.filter(registration_id=created["id"]).exists()
    approved = services.registration_approve(registration=Registration.objects.get(pk=first["id"]), reviewer="ops")
    assert approved.status == "published" and Agent.objects.filter(registration=approved).exists()
    services.registration_reject(registration=Registration.objects.get(pk=second["id"]), reviewer="ops", note="Not OpenAI.")
    rejected = verify(alice, second["id"])
    assert rejected.status_code == 409 and "rejected" in rejected.json()["error"]
    assert alice.client.get(f"/api/v1/atlas/registrations/{second['id']}").json()["note"] == "Not OpenAI."


def test_withdrawing_takes_a_published_entry_out_of_the_registry_and_verify_is_then_409(alice, dns, client):
    created = create(alice)
    dns.publish("_svc-atlas.acme-agents.com", created["verification"]["value"])
    assert verify(alice, created["id"]).json()["status"] == "published"
    withdrawn = alice.client.delete(f"/api/v1/atlas/registrations/{created['id']}")
    assert withdrawn.status_code == 200 and withdrawn.json()["status"] == "withdrawn"
    assert not Agent.objects.filter(name="Acme Fetcher").exists()
    assert client.get("/api/v1/atlas/lookup", {"user_agent": "AcmeFetcher/1.0"}).json()["claim"] == "none"
    assert alice.client.delete(f"/api/v1/atlas/registrations/{created['id']}").status_code == 200
    refused = verify(alice, created["id"])
    assert refused.status_code == 409 and "withdrawn" in refused.json()["error"]


def test_a_token_published_by_another_meanwhile_makes_verify_409(alice, bob, dns):
    mine = create(alice)
    theirs = create(bob, name="Other Fetcher", operator="Other Co", domain="other-agents.com")
    dns.publish("_svc-atlas.other-agents.com", theirs["verification"]["value"])
    assert verify(bob, theirs["id"]).json()["status"] == "published"
    dns.publish("_svc-atlas.acme-agents.com", mine["verification"]["value"])
    collided = verify(alice, mine["id"])
    assert collided.status_code == 409 and "AcmeFetcher" in collided.json()["error"]


def test_another_organization_sees_none_of_it(alice, bob):
    created = create(alice)
    assert bob.client.get(f"/api/v1/atlas/registrations/{created['id']}").status_code == 404
    assert bob.client.get("/api/v1/atlas/registrations").json() == {"registrations": []}
    assert bob.client.delete(f"/api/v1/atlas/registrations/{created['id']}").status_code == 404
    assert Registration.objects.get(pk=created["id"]).status == "pending_verification"


def test_registrations_need_a_full_key(client, alice):
    assert client.get("/api/v1/atlas/registrations").status_code == 401
    from accounts.services import api_key_issue

    evaluate = make_tenant("evaluator")
    issued = api_key_issue(org=evaluate.org, name="eval", scope="evaluate")
    evaluate.client.credentials(HTTP_AUTHORIZATION=f"Bearer {issued.raw}")
    assert evaluate.client.post("/api/v1/atlas/registrations", body(), format="json").status_code == 403


def test_publishing_emits_the_webhook_event(alice, dns):
    from accounts.models import WebhookEvent
    from accounts.webhooks import webhook_set

    webhook_set(org=alice.org, url="https://hooks.acme-agents.com/atlas")
    created = create(alice)
    dns.publish("_svc-atlas.acme-agents.com", created["verification"]["value"])
    from unittest import mock

    with mock.patch("accounts.webhooks._enqueue"):  # delivery itself is the webhook suite's business
        assert verify(alice, created["id"]).json()["status"] == "published"
    event = WebhookEvent.objects.get(org=alice.org, type="atlas.registration.published")
    assert event.data == {"id": created["id"], "name": "Acme Fetcher", "status": "published"}
