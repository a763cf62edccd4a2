import pytest

from atlas.models import Agent

pytestmark = pytest.mark.django_db

GPTBOT = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"
CHROME = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"


def lookup(client, user_agent, **extra):
    return client.get("/api/v1/atlas/lookup", {"user_agent": user_agent}, **extra)


def test_the_registry_is_seeded_after_migrate():
    assert Agent.objects.count() > 200
    gptbot = Agent.objects.get(slug="gptbot")
    assert gptbot.operator == "OpenAI" and gptbot.purpose == "training_crawl" and gptbot.verification == "ip_ranges"
    assert {source["source"] for source in gptbot.sources} >= {"ai-crawler-index", "ai.robots.txt"}


def test_a_lookup_names_the_agent_its_operator_purpose_and_how_to_verify_it(client):
    response = lookup(client, GPTBOT)
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["claim"] == "agent" and body["agent"]["slug"] == "gptbot"
    assert body["operator"] == "OpenAI" and body["purpose"] == "training_crawl"
    assert body["verification"]["method"] == "ip_ranges"
    assert body["verification"]["ip_lists"][0]["upstream_url"] == "https://openai.com/gptbot.json"
    assert body["verified"] is None
    assert response["X-Atlas-Lookup-Limit"] == "10" and response["X-Atlas-Lookup-Remaining"] == "9"


def test_an_ordinary_browser_claims_nothing(client):
    body = lookup(client, CHROME).json()
    assert body["claim"] == "none" and body["agent"] is None and body["operator"] is None
