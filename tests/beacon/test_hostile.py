"""Hostile and broken sites: the scan finishes within its budget, says `error` where due, never fetches a private address."""

import gzip
import time

import pytest

from beacon.sample_site import Page
from beacon.services import check_start
from core.errors import BadRequest
from tests import netguard
from tests.beacon.conftest import verdict
from tests.beacon.sites import good

pytestmark = pytest.mark.django_db


def test_a_redirect_loop_ends_in_error_within_the_request_budget(site, scan, settings):
    server, origin = site()
    server.routes.update(good(origin))
    server.routes["/"] = Page("", status=302, headers={"Location": "/"})
    report = scan(origin + "/")
    assert verdict(report, "served_to_agents")["status"] == "error"
    assert "redirect" in verdict(report, "served_to_agents")["summary"].lower()
    assert report["requests_made"] <= settings.BEACON_MAX_REQUESTS
    assert len(server.requests) <= settings.BEACON_MAX_REQUESTS


@pytest.mark.parametrize("target", ["http://10.0.0.7/", "http://169.254.169.254/latest/meta-data/", "http://inside.test/"])
def test_a_redirect_to_a_private_address_is_refused_before_any_packet(target, site, scan, fake_dns):
    fake_dns({"inside.test": ["192.168.1.10"]})
    server, origin = site()
    server.routes.update(good(origin))
    server.routes["/"] = Page("", status=302, headers={"Location": target})
    server.routes["/robots.txt"] = Page("", status=301, headers={"Location": target + "robots.txt"})
    report = scan(origin + "/")
    served = verdict(report, "served_to_agents")
    assert served["status"] == "error"
    assert "refused" in served["summary"]
    assert verdict(report, "robots_ai_access")["status"] == "error"
    assert netguard.take_attempts() == []


def test_huge_and_gzip_bomb_bodies_are_capped(site, scan):
    server, origin = site()
    server.routes.update(good(origin))
    bomb = gzip.compress(b"\0" * 50_000_000)
    server.routes["/.well-known/agent-card.json"] = Page(bomb, content_type="application/json", headers={"Content-Encoding": "gzip"})
    server.routes["/openapi.json"] = Page(b"[" + b"1," * 3_000_000 + b"1]", content_type="application/json")
    started = time.monotonic()
    report = scan(origin + "/")
    assert time.monotonic() - started < 20
    card = verdict(report, "a2a_agent_card")
    assert card["status"] in ("error", "fail")
    assert any("larger than" in (e.get("error") or "") for e in card["evidence"])
    assert verdict(report, "served_to_agents")["status"] == "pass"


def test_a_huge_home_page_is_read_up_to_its_cap(site, scan):
    server, origin = site()
    server.routes.update(good(origin))
    server.routes["/"] = Page("<html><head><title>Lumen Notes, a very big page</title></head><body><h1>Big</h1>" + "<p>word </p>" * 400_000 + "</body></html>")
    report = scan(origin + "/")
    assert verdict(report, "readable_without_javascript")["status"] == "pass"


def test_slow_responses_end_the_check_within_its_time_budget(site, scan, settings):
    settings.BEACON_FETCH_SECONDS = 1
    settings.BEACON_CHECK_SECONDS = 4
    server, origin = site()
    server.routes.update({path: Page(page.body, status=page.status, content_type=page.content_type, headers=page.headers, delay=3)
                          for path, page in good(origin).items() if isinstance(page, Page)})
    started = time.monotonic()
    report = scan(origin + "/")
    assert time.monotonic() - started < 7
    assert verdict(report, "served_to_agents")["status"] == "error"
    assert report["scores"]["overall"] is None or isinstance(report["scores"]["overall"], int)


def test_broken_encodings_do_not_break_the_scan(site, scan):
    server, origin = site()
    server.routes.update(good(origin))
    server.routes["/"] = Page(b"<html><head><title>Caf\xe9 \xff\xfe notes for teams</title></head><body><h1>\xc3\x28</h1>" + b"<p>bad \xed\xa0\x80 bytes</p>" * 200,
                              content_type="text/html; charset=utf-8")
    server.routes["/robots.txt"] = Page(b"User-agent: *\n\xff\xfeDisallow: /private\n", content_type="text/plain; charset=klingon")
    server.routes["/.well-known/agent-card.json"] = Page(b'{"name": "\xff"}', content_type="application/json")
    report = scan(origin + "/")
    assert verdict(report, "served_to_agents")["status"] == "pass"
    assert verdict(report, "robots_ai_access")["status"] == "pass"
    assert all(c["status"] in ("pass", "partial", "fail", "not_applicable", "error") for c in report["checks"])


def test_a_site_that_never_answers_gives_errors_fast(scan, fake_dns):
    import socket

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    fake_dns({"gone.test": ["127.0.0.1"]})
    started = time.monotonic()
    report = scan(f"http://gone.test:{port}/")
    assert time.monotonic() - started < 10
    assert verdict(report, "served_to_agents")["status"] == "error"
    assert report["scores"] == {"overall": None, "find": None, "read": None, "use": None}


def test_the_request_budget_is_a_hard_cap(site, scan, settings):
    settings.BEACON_MAX_REQUESTS = 8
    server, origin = site()
    server.routes.update(good(origin))
    report = scan(origin + "/")
    assert report["requests_made"] <= 8
    assert len(server.requests) <= 8
    assert any("budget" in (e.get("error") or "") for c in report["checks"] for e in c["evidence"])


@pytest.mark.parametrize("url", [
    "http://127.0.0.1/", "http://localhost:8000/", "http://10.1.2.3/", "http://[::1]/", "http://169.254.169.254/",
    "http://2130706433/", "ftp://example.com/", "http://user:pw@example.com/", "file:///etc/passwd", "http://metadata.google.internal/",
])
def test_private_and_malformed_urls_are_refused_before_any_fetch(url):
    with pytest.raises(BadRequest):
        check_start(url=url)
    assert netguard.take_attempts() == []


def test_a_name_that_resolves_to_a_private_address_is_refused_before_payment(fake_dns):
    fake_dns({"intranet-shop.test": ["10.20.30.40"]})
    with pytest.raises(BadRequest) as refused:
        check_start(url="http://intranet-shop.test/")
    assert "10.20.30.40" in refused.value.message
    assert netguard.take_attempts() == []


@pytest.mark.parametrize("garbage", [[1, 2], 7, "text", None, {"name": ["x"], "skills": "all", "remotes": {"url": 3},
                                                               "capabilities": ["x"], "supportedInterfaces": [1], "linkset": [1, {"service-desc": "x"}],
                                                               "entries": [{"type": "application/mcp-server-card+json", "url": 5}],
                                                               "servers": [{"server": {"name": 1, "remotes": [None]}}], "paths": [1], "info": "x",
                                                               "openapi": 3}],
                         ids=["list", "number", "string", "null", "wrong types"])
def test_documents_of_the_wrong_shape_never_crash_a_check(garbage, site, scan, settings):
    import json

    server, origin = site()
    server.routes.update(good(origin))
    settings.BEACON_MCP_REGISTRY_URL = origin + "/registry"
    body = json.dumps(garbage)
    for path in ("/.well-known/agent-card.json", "/.well-known/mcp/server-card.json", "/.well-known/ai-catalog.json",
                 "/.well-known/api-catalog", "/openapi.json", "/.well-known/ucp", "/.well-known/acp.json", "/registry/v0.1/servers"):
        server.routes[path] = Page(body, content_type="application/json")
    server.routes["/"] = Page(html_with_bad_jsonld(body))
    report = scan(origin + "/")
    crashed = [c["id"] for c in report["checks"] if "could not be completed" in c["summary"]]
    assert crashed == []


def html_with_bad_jsonld(body: str) -> str:
    return (f'<html><head><title>Weird shapes everywhere</title><script type="application/ld+json">{body}</script></head>'
            f"<body><h1>x</h1></body></html>")
