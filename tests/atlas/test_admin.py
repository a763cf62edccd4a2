"""The review console: operators approve or reject held registrations, edit entries, record findings."""

import json

import pytest
from django.contrib.auth import get_user_model

from atlas import services
from atlas.models import Agent, Finding, Registration

pytestmark = pytest.mark.django_db


@pytest.fixture
def operator_client(client):
    user = get_user_model().objects.create_superuser("ops@example.com", "ops@example.com", "a long operator password")
    client.force_login(user)
    return client


def held(tenant, name):
    registration = services.registration_create(org=tenant.org, name=name, operator="OpenAI", domain="held-agents.com",
                                                tokens=[name.replace(" ", "")])
    Registration.objects.filter(pk=registration.pk).update(status=Registration.PENDING_REVIEW)
    return registration


def test_approving_a_held_registration_publishes_it_and_rejecting_closes_it(operator_client, alice):
    first, second = held(alice, "Held Agent One"), held(alice, "Held Agent Two")
    url = "/admin/atlas/registration/"
    operator_client.post(url, {"action": "approve", "_selected_action": [first.pk]})
    operator_client.post(url, {"action": "reject", "_selected_action": [second.pk]})
    assert Registration.objects.get(pk=first.pk).status == "published"
    assert Agent.objects.filter(registration_id=first.pk, name="Held Agent One").exists()
    assert Registration.objects.get(pk=second.pk).status == "rejected"
    operator_client.post(url, {"action": "approve", "_selected_action": [second.pk]})  # refused: not held any more
    assert Registration.objects.get(pk=second.pk).status == "rejected"


def test_an_operators_edit_survives_the_seed_refresh_and_findings_are_recorded(operator_client):
    agent = Agent.objects.get(slug="ccbot")
    page = operator_client.get(f"/admin/atlas/agent/{agent.pk}/change/")
    assert page.status_code == 200
    form = page.context["adminform"].form
    data = {name: form[name].value() for name in form.fields if form[name].value() is not None}
    for name in ("user_agent_tokens", "ip_lists", "rdns_suffixes", "examples", "sources"):
        value = form[name].value()
        data[name] = value if isinstance(value, str) else json.dumps(value)
    data.update({"description": "Common Crawl's crawler, checked by our operators.", "follows_robots_txt": "true",
                 "respects_robots_txt": "true",
                 "findings-TOTAL_FORMS": "1", "findings-INITIAL_FORMS": "0", "findings-MIN_NUM_FORMS": "0",
                 "findings-MAX_NUM_FORMS": "1000", "findings-0-title": "Seen without robots.txt fetch",
                 "findings-0-detail": "On 2026-10-01.", "findings-0-recorded_by": "ops"})
    data.pop("registration", None)
    saved = operator_client.post(f"/admin/atlas/agent/{agent.pk}/change/", data)
    assert saved.status_code == 302, saved.content[:2000]
    agent.refresh_from_db()
    assert agent.locked and agent.sources[-1]["source"] == "operator"
    assert Finding.objects.get(agent=agent).title == "Seen without robots.txt fetch"
    services.registry_refresh()
    assert Agent.objects.get(slug="ccbot").description == "Common Crawl's crawler, checked by our operators."
