"""The public reads, sightings and traffic, datasets and the report, and the refresh."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.core.management import call_command

from accounts.models import Organization
from atlas import services, tasks
from atlas.models import Agent, Finding, IpRangeList, Sighting
from core import safe_http

pytestmark = pytest.mark.django_db

GPTBOT = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"


@pytest.fixture
def pro(alice):
    Organization.objects.filter(pk=alice.org.pk).update(atlas_tier="pro")
    return alice


def test_the_overview_counts_the_registry_and_lists_datasets_tiers_and_endpoints(client):
    body = client.get("/api/v1/atlas").json()
    assert body["registry"]["agents"] == Agent.objects.count() and body["registry"]["ip_lists"] == 15
    assert {d["id"] for d in body["datasets"]} >= {"agents", "traffic-shares", "osint", "agent-consumers-2026-09"}
    assert [t["id"] for t in body["tiers"]] == ["free", "pro", "team"]
    assert "GET /api/v1/atlas/lookup" in body["endpoints"]


def test_agents_are_searched_filtered_and_paged(client):
    page = client.get("/api/v1/atlas/agents").json()
    assert len(page["agents"]) == 50 and page["total"] == Agent.objects.count()
    assert {"gptbot"} <= {a["slug"] for a in client.get("/api/v1/atlas/agents", {"q": "openai"}).json()["agents"]}
    training = client.get("/api/v1/atlas/agents", {"purpose": "training", "limit": 250}).json()["agents"]
    assert training and all(a["purpose"] == "training_crawl" for a in training)
    google = client.get("/api/v1/atlas/agents", {"operator": "google", "verification": "ip_ranges"}).json()["agents"]
    assert google and all(a["operator"] == "Google" and a["verification"] == "ip_ranges" for a in google)
    second = client.get("/api/v1/atlas/agents", {"limit": 2, "offset": 1}).json()["agents"]
    assert [a["slug"] for a in second] == [a["slug"] for a in page["agents"][1:3]]


@pytest.mark.parametrize("query,words", [({"limit": 0}, "limit"), ({"limit": 251}, "limit"), ({"offset": -1}, "offset"),
                                         ({"verification": "magic"}, "verification")])
def test_a_bad_agents_query_is_400_naming_it(client, query, words):
    response = client.get("/api/v1/atlas/agents", query)
    assert response.status_code == 400 and words in response.json()["error"]


def test_an_entry_shows_public_fields_to_everyone_and_full_fields_to_paid_tiers(client, pro):
    gptbot = Agent.objects.get(slug="gptbot")
    Finding.objects.create(agent=gptbot, title="Crawls from a second ASN", detail="Seen from AS8075 on 2026-09-01.")
    public = client.get("/api/v1/atlas/agents/gptbot").json()
    assert public["fields"] == "public" and "examples" not in public["agent"]
    assert public["osint"] == [{"title": "Crawls from a second ASN", "observed_on": None}]
    refused = client.get("/api/v1/atlas/agents/gptbot", {"fields": "full"})
    assert refused.status_code == 402 and "Pro" in refused.json()["error"]
    full = pro.client.get("/api/v1/atlas/agents/gptbot").json()
    assert full["fields"] == "full" and full["agent"]["examples"] and full["agent"]["ip_lists"][0]["prefixes"] > 0
    assert full["osint"][0]["detail"].startswith("Seen from AS8075")
    assert pro.client.get("/api/v1/atlas/agents/gptbot", {"osint": "false"}).json()["osint"] == []
    assert client.get("/api/v1/atlas/agents/no-such-agent").status_code == 404


def test_requests_by_registered_agents_are_sighted_per_day_without_addresses(client, alice):
    assert client.get("/api/v1/atlas/traffic").status_code == 404
    client.get("/api/v1/atlas/summary", HTTP_USER_AGENT=GPTBOT, REMOTE_ADDR="132.196.86.7")
    client.get("/api/v1/atlas", HTTP_USER_AGENT=GPTBOT, REMOTE_ADDR="198.51.100.4")
    client.get("/api/v1/atlas", HTTP_USER_AGENT="Mozilla/5.0 (Windows NT 10.0) Chrome/131.0 Safari/537.36")
    row = Sighting.objects.get()
    assert (row.agent_slug, row.requests, row.verified, row.failed) == ("gptbot", 2, 1, 1)
    assert not any("132.196" in json.dumps(value, default=str) for value in Sighting.objects.values())
    listed = client.get("/api/v1/atlas/sightings").json()
    assert listed["sightings"][0]["agent"] == "gptbot" and listed["sightings"][0]["requests"] == 2
    csv = client.get("/api/v1/atlas/sightings", {"format": "csv"})
    assert csv["Content-Type"].startswith("text/csv") and csv.content.decode().startswith("day,agent,name,requests")
    assert client.get("/api/v1/atlas/sightings", {"days": 8}).status_code == 400
    assert alice.client.get("/api/v1/atlas/sightings", {"days": 90}).status_code == 200
    too_long = alice.client.get("/api/v1/atlas/sightings", {"days": 91})
    assert too_long.status_code == 400 and "90" in too_long.json()["error"]
    assert tasks.atlas_traffic_report_build.delay().get() is True
    traffic = client.get("/api/v1/atlas/traffic").json()
    assert traffic["requests"] == 2 and traffic["agents"][0]["agent"] == "gptbot" and traffic["agents"][0]["share"] == 1.0


def test_datasets_say_what_they_hold_and_paid_ones_need_pro(client, pro):
    listed = {d["id"]: d for d in client.get("/api/v1/atlas/datasets").json()["datasets"]}
    assert listed["agents"]["rows"] == Agent.objects.count() and listed["agents"]["available"] is False
    assert listed["traffic-shares"]["available"] is True and listed["traffic-shares"]["rows"] == 0
    assert listed["sector-scans"]["rows"] == 0 and "no rows" in listed["sector-scans"]["note"]
    assert "MIT" in listed["agents"]["license"] and "Martin Monperrus" in listed["agents"]["license"]
    assert client.get("/api/v1/atlas/datasets/agents").status_code == 402
    assert client.get("/api/v1/atlas/datasets/traffic-shares").status_code == 200
    assert client.get("/api/v1/atlas/datasets/nothing").status_code == 404
    agents = json.loads(pro.client.get("/api/v1/atlas/datasets/agents").content)
    assert agents["rows"] == len(agents["data"]) == Agent.objects.count()
    csv = pro.client.get("/api/v1/atlas/datasets/agents", {"format": "csv"})
    assert csv["Content-Type"].startswith("text/csv") and "gptbot" in csv.content.decode()
    assert pro.client.get("/api/v1/atlas/datasets/agents", {"format": "md"}).status_code == 400
    report = pro.client.get("/api/v1/atlas/datasets/agent-consumers-2026-09")
    assert report["Content-Type"].startswith("text/markdown") and b"## Verification methods" in report.content
    assert tasks.atlas_datasets_build.delay().get()["agents"] == Agent.objects.count()


def test_the_report_summary_is_free_and_the_full_report_needs_pro(client, pro):
    summary = client.get("/api/v1/atlas/report")
    assert summary.status_code == 200 and b"## Summary" in summary.content and b"## Agents by purpose" not in summary.content
    assert client.get("/api/v1/atlas/report", {"section": "full"}).status_code == 402
    assert b"## Agents by purpose class" in pro.client.get("/api/v1/atlas/report", {"section": "full"}).content
    assert client.get("/api/v1/atlas/summary").json()["registry"]["agents"] == Agent.objects.count()


def test_the_refresh_fetches_each_list_keeping_its_date_and_keeps_a_list_that_fails(settings, fake_dns):
    served = {"/gptbot.json": {"creationTime": "2026-11-20T00:00:00Z", "prefixes": [{"ipv4Prefix": "192.0.2.0/24"},
                                                                                  {"ipv6Prefix": "2001:db8::/32"}]}}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            document = served.get(self.path)
            self.send_response(200 if document else 404)
            self.end_headers()
            if document:
                self.wfile.write(json.dumps(document).encode())

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    fake_dns({"lists.acme-agents.com": ["127.0.0.1"]})
    for row in IpRangeList.objects.all():
        row.upstream_url = f"http://lists.acme-agents.com:{httpd.server_address[1]}/{row.id.split('-', 1)[1]}.json"
        row.save()
    locked = Agent.objects.get(slug="ccbot")
    locked.description, locked.locked = "Edited by an operator.", True
    locked.save()
    settings.ATLAS_REFRESH_FETCH = True
    try:
        with safe_http.allow_loopback():
            result = tasks.atlas_refresh.delay().get()
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert result["ip_lists_fetched"] == 1 and result["ip_lists_failed"] == 14
    gptbot = IpRangeList.objects.get(id="openai-gptbot")
    assert gptbot.creation_time == "2026-11-20T00:00:00Z" and gptbot.origin == "fetched" and len(gptbot.prefixes) == 2
    bing = IpRangeList.objects.get(id="bing-bingbot")
    assert bing.prefixes and "404" in bing.last_error
    assert Agent.objects.get(slug="ccbot").description == "Edited by an operator."
    body = services.claim_verify(user_agent=GPTBOT, ip="192.0.2.44")
    assert body["verified"] is True


def test_the_management_command_reloads_the_seed(capsys):
    Agent.objects.filter(slug="gptbot").update(operator="Someone Else")
    call_command("atlas_refresh")
    assert "entries=" in capsys.readouterr().out
    assert Agent.objects.get(slug="gptbot").operator == "OpenAI"
