"""Lookup: what a string claims, metered per tier; and the verification call with IP ranges and FCrDNS."""

import pytest
from dnslib import AAAA, PTR, QTYPE, RR, A

from accounts.models import Organization
from accounts.services import api_key_issue
from atlas.models import Agent
from tests.accounts.proof_servers import LoopbackDns, TxtResolver

pytestmark = pytest.mark.django_db

GPTBOT = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"
YANDEX = "Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)"
CHROME = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"


def lookup(client, user_agent):
    return client.get("/api/v1/atlas/lookup", {"user_agent": user_agent})


def test_the_registry_is_seeded_after_migrate():
    assert Agent.objects.count() > 200
    gptbot = Agent.objects.get(slug="gptbot")
    assert gptbot.operator == "OpenAI" and gptbot.purpose == "training_crawl" and gptbot.verification == "ip_ranges"
    assert {source["source"] for source in gptbot.sources} >= {"ai-crawler-index", "ai.robots.txt"}
    assert gptbot.respects_robots_txt is True and gptbot.follows_robots_txt is True


def test_a_lookup_names_the_agent_its_operator_purpose_and_how_to_verify_it(client):
    response = lookup(client, GPTBOT)
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["claim"] == "agent" and body["agent"]["slug"] == "gptbot" and body["matched_token"] == "GPTBot"
    assert body["operator"] == "OpenAI" and body["purpose"] == "training_crawl"
    assert body["verification"]["method"] == "ip_ranges" and body["verification"]["verifiable"] is True
    assert body["verification"]["ip_lists"][0]["upstream_url"] == "https://openai.com/gptbot.json"
    assert body["verified"] is None
    assert response["X-Atlas-Lookup-Limit"] == "10" and response["X-Atlas-Lookup-Remaining"] == "9"


def test_an_ordinary_browser_claims_nothing_and_curl_claims_no_operator(client):
    body = lookup(client, CHROME).json()
    assert body["claim"] == "none" and body["agent"] is None and body["operator"] is None
    curl = lookup(client, "curl/8.5.0").json()
    assert curl["claim"] == "generic_client" and curl["operator"] is None
    assert curl["generic_client"]["name"] == "curl" and curl["verification"]["method"] == "unattributable"


def test_a_control_token_is_unattributable(client):
    body = lookup(client, "Google-Extended/1.0").json()
    assert body["claim"] == "control_token" and body["verification"]["method"] == "unattributable"


def test_an_agent_without_a_published_method_is_user_agent_only(client):
    body = lookup(client, "Mozilla/5.0 (compatible; Bytespider; spider-feedback@bytedance.com)").json()
    assert body["agent"]["slug"] == "bytespider" and body["verification"]["method"] == "user_agent_only"


@pytest.mark.parametrize("query,words", [({}, "user_agent"), ({"user_agent": "x" * 2001}, "2000")])
def test_a_missing_or_too_long_user_agent_is_400_and_costs_nothing(client, query, words):
    response = client.get("/api/v1/atlas/lookup", query)
    assert response.status_code == 400 and words in response.json()["error"]
    assert lookup(client, GPTBOT)["X-Atlas-Lookup-Remaining"] == "9"


def test_keyless_callers_get_ten_a_day_then_429_with_retry_after(client):
    for n in range(10):
        assert lookup(client, GPTBOT)["X-Atlas-Lookup-Remaining"] == str(9 - n)
    refused = lookup(client, GPTBOT)
    assert refused.status_code == 429 and "lookup limit" in refused.json()["error"]
    assert int(refused["Retry-After"]) > 0 and refused["X-Atlas-Lookup-Remaining"] == "0"


@pytest.mark.parametrize("tier,limit", [("free", "100"), ("pro", "10000"), ("team", "100000")])
def test_each_tier_has_its_daily_limit(alice, tier, limit):
    Organization.objects.filter(pk=alice.org.pk).update(atlas_tier=tier)
    response = lookup(alice.client, GPTBOT)
    assert response.status_code == 200
    assert response["X-Atlas-Lookup-Limit"] == limit and response["X-Atlas-Lookup-Remaining"] == str(int(limit) - 1)


def test_keyed_lookups_are_counted_per_organization(alice, bob):
    lookup(alice.client, GPTBOT)
    assert lookup(alice.client, GPTBOT)["X-Atlas-Lookup-Remaining"] == "98"
    assert lookup(bob.client, GPTBOT)["X-Atlas-Lookup-Remaining"] == "99"


def test_a_bad_key_is_401_and_an_evaluate_key_403(client, alice):
    client.credentials(HTTP_AUTHORIZATION="Bearer svc_live_nope")
    assert lookup(client, GPTBOT).status_code == 401
    issued = api_key_issue(org=alice.org, name="eval", scope="evaluate")
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {issued.raw}")
    assert lookup(client, GPTBOT).status_code == 403


# Verification by address ------------------------------------------------------------------------


def verify(client, **body):
    response = client.post("/api/v1/atlas/lookup/verify", body, format="json")
    assert response.status_code == 200, response.json()
    return response.json()


def test_an_address_in_the_operators_published_ranges_verifies_the_claim(client):
    body = verify(client, user_agent=GPTBOT, ip="132.196.86.7")
    assert body["verified"] is True and body["verdict"] == "ip_ranges"
    assert body["checks"]["ip_ranges"]["list"] == "openai-gptbot"


def test_an_address_outside_them_makes_the_claim_unattributable(client):
    body = verify(client, user_agent=GPTBOT, ip="203.0.113.9")
    assert body["verified"] is False and body["verdict"] == "unattributable"


def test_without_an_address_nothing_is_verified(client):
    body = verify(client, user_agent=GPTBOT)
    assert body["verified"] is False and body["verdict"] == "user_agent_only"


def test_verification_counts_as_a_lookup_and_a_bad_address_is_400(client):
    response = client.post("/api/v1/atlas/lookup/verify", {"user_agent": GPTBOT, "ip": "not-an-ip"}, format="json")
    assert response.status_code == 400 and "ip" in response.json()["error"]
    ok = client.post("/api/v1/atlas/lookup/verify", {"user_agent": GPTBOT}, format="json")
    assert ok["X-Atlas-Lookup-Remaining"] == "9"


class ReverseResolver(TxtResolver):
    """The loopback DNS server, answering PTR and A too."""

    def __init__(self):
        super().__init__()
        self.ptr: dict[str, str] = {}
        self.a: dict[str, list[str]] = {}

    def resolve(self, request, handler):
        name = str(request.q.qname).rstrip(".").lower()
        if request.q.qtype == QTYPE.PTR and name in self.ptr:
            reply = request.reply()
            reply.add_answer(RR(request.q.qname, QTYPE.PTR, rdata=PTR(self.ptr[name]), ttl=60))
            return reply
        if request.q.qtype in (QTYPE.A, QTYPE.AAAA) and name in self.a:
            reply = request.reply()
            for address in self.a[name]:
                if (":" in address) == (request.q.qtype == QTYPE.AAAA):
                    rdata = AAAA(address) if ":" in address else A(address)
                    reply.add_answer(RR(request.q.qname, request.q.qtype, rdata=rdata, ttl=60))
            return reply
        return super().resolve(request, handler)


@pytest.fixture
def rdns(settings):
    server = LoopbackDns()
    server.resolver = ReverseResolver()
    server.server.server.resolver = server.resolver
    settings.DOMAIN_PROOF_NAMESERVERS = [f"127.0.0.1:{server.port}"]
    settings.DOMAIN_PROOF_DNS_TIMEOUT_SECONDS = 2
    yield server.resolver
    server.stop()


def test_forward_confirmed_reverse_dns_verifies_a_crawler_without_a_published_list(client, rdns):
    rdns.ptr["10.253.255.5.in-addr.arpa"] = "spider-5-255-253-10.yandex.com."
    rdns.a["spider-5-255-253-10.yandex.com"] = ["5.255.253.10"]
    body = verify(client, user_agent=YANDEX, ip="5.255.253.10")
    assert body["verified"] is True and body["verdict"] == "ip_ranges"
    assert body["checks"]["reverse_dns"]["ptr"] == "spider-5-255-253-10.yandex.com"


def test_a_reverse_name_alone_proves_nothing(client, rdns):
    rdns.ptr["10.253.255.5.in-addr.arpa"] = "spider-5-255-253-10.yandex.com."
    rdns.a["spider-5-255-253-10.yandex.com"] = ["198.51.100.1"]  # the forward lookup does not come back
    body = verify(client, user_agent=YANDEX, ip="5.255.253.10")
    assert body["verified"] is False and body["verdict"] == "unattributable"
    assert "does not resolve back" in body["checks"]["reverse_dns"]["reason"]


def test_a_reverse_name_outside_the_operators_domains_fails(client, rdns):
    rdns.ptr["10.253.255.5.in-addr.arpa"] = "yandex.com.attacker.example."
    body = verify(client, user_agent=YANDEX, ip="5.255.253.10")
    assert body["verified"] is False and "not under" in body["checks"]["reverse_dns"]["reason"]
