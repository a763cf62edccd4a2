"""Every check's verdicts, each against a real local site built to pass, partly pass or fail it."""

import pytest

from beacon.sample_site import Page, mcp_responder
from tests.beacon.conftest import verdict
from tests.beacon.sites import bare, good, html, j, with_page, x402_header

pytestmark = pytest.mark.django_db


def _combine(*builders):
    def build(origin):
        routes = {}
        for builder in builders:
            routes.update(builder(origin) if callable(builder) else builder)
        return routes
    return build


def good_but(**changes):
    """The good site with some routes replaced (None removes one)."""
    def build(origin):
        routes = good(origin)
        for path, page in changes.items():
            path = path if path.startswith("/") else "/" + path
            value = page(origin) if callable(page) and not isinstance(page, Page) and page.__code__.co_argcount == 1 and page.__name__ == "<lambda>" else page
            if value is None:
                routes.pop(path, None)
            else:
                routes[path] = value
        return routes
    return build


def P(path: str, page) -> dict:
    return {path: page}


CASES = [
    # find: robots_ai_access
    ("robots: training blocked, search and user agents allowed", good, "robots_ai_access", "pass"),
    ("robots: none (404) allows everything", bare, "robots_ai_access", "pass"),
    ("robots: per-agent group blocks the user-triggered fetchers", _combine(good, P("/robots.txt", Page(
        "User-agent: *\nAllow: /\n\nUser-agent: ChatGPT-User\nUser-agent: Claude-User\nDisallow: /\n", content_type="text/plain"))),
     "robots_ai_access", "partial"),
    ("robots: wildcard group disallows everything", _combine(good, P("/robots.txt", Page("User-agent: *\nDisallow: /\n", content_type="text/plain"))),
     "robots_ai_access", "fail"),
    ("robots: the longest match wins ($ anchors the home page)", _combine(good, P("/robots.txt", Page(
        "User-agent: *\nDisallow: /\nAllow: /$\nDisallow: /*.pdf$\n", content_type="text/plain"))), "robots_ai_access", "pass"),
    ("robots: a 503 means nothing may be fetched", _combine(good, P("/robots.txt", Page("down", status=503, content_type="text/plain"))),
     "robots_ai_access", "fail"),
    # find: sitemap
    ("sitemap named in robots", good, "sitemap", "pass"),
    ("sitemap not named in robots", _combine(good, P("/robots.txt", Page("User-agent: *\nAllow: /\n", content_type="text/plain"))), "sitemap", "partial"),
    ("sitemap that is not XML", _combine(good, P("/sitemap.xml", Page("<urlset><url>", content_type="application/xml"))), "sitemap", "partial"),
    ("no sitemap", bare, "sitemap", "fail"),
    # find: llms_txt
    ("llms.txt complete", good, "llms_txt", "pass"),
    ("llms.txt with only a title", _combine(good, P("/llms.txt", Page("# Lumen Notes\n\nSome words.\n", content_type="text/plain"))), "llms_txt", "partial"),
    ("no llms.txt", bare, "llms_txt", "fail"),
    ("an SPA answering llms.txt with its HTML shell", _combine(bare, P("/llms.txt", Page(html(), content_type="text/html"))), "llms_txt", "fail"),
    # read: served_to_agents
    ("page served", good, "served_to_agents", "pass"),
    ("bot wall answering 403", _combine(good, P("/", Page("<html><body>Access denied</body></html>", status=403))), "served_to_agents", "fail"),
    ("Cloudflare challenge", _combine(good, P("/", Page(html(body="<p>Just a moment...</p>"), status=403, headers={"cf-mitigated": "challenge"}))),
     "served_to_agents", "fail"),
    ("challenge page answering 200", _combine(good, P("/", Page("<html><title>Just a moment...</title><body>Checking your browser</body></html>"))),
     "served_to_agents", "fail"),
    ("noai robots meta", _combine(good, P("/", Page(html(head='<meta name="robots" content="noai, noimageai">')))), "served_to_agents", "partial"),
    # read: readable_without_javascript
    ("server-rendered page", good, "readable_without_javascript", "pass"),
    ("JavaScript-only shell", with_page(html(body='<div id="root"></div><noscript>You need to enable JavaScript to run this app.</noscript>'
                                             '<script src="/app.js"></script>')), "readable_without_javascript", "fail"),
    ("short page without a heading", with_page(html(body="<p>" + "Notes from meetings for busy teams. " * 10 + "</p>")),
     "readable_without_javascript", "partial"),
    ("page not served cannot be judged", _combine(good, P("/", Page("no", status=403))), "readable_without_javascript", "error"),
    # read: title_and_description
    ("title and description", good, "title_and_description", "pass"),
    ("title without description", with_page(html(description="")), "title_and_description", "partial"),
    ("generic title, no description", bare, "title_and_description", "fail"),
    # read: structured_data
    ("JSON-LD SoftwareApplication", good, "structured_data", "pass"),
    ("microdata Product", with_page(html(body='<main><h1>Lamp</h1><div itemscope itemtype="https://schema.org/Product">'
                                           '<span itemprop="name">Lamp</span></div></main>')), "structured_data", "pass"),
    ("OpenGraph only", with_page(html(head='<meta property="og:title" content="Lumen">')), "structured_data", "partial"),
    ("invalid JSON-LD", with_page(html(head='<script type="application/ld+json">{"@type": "Organization",</script>')), "structured_data", "partial"),
    ("no structured data", bare, "structured_data", "fail"),
    # read: markdown_version
    ("markdown by rel=alternate link", good, "markdown_version", "pass"),
    ("markdown by content negotiation", lambda origin: {"/": lambda h: Page("# Lumen\n\n[Docs](/docs)\n", content_type="text/markdown")
                                                        if "text/markdown" in h.headers.get("Accept", "") else Page(html())},
     "markdown_version", "pass"),
    ("markdown link that answers HTML", with_page(html(head='<link rel="alternate" type="text/markdown" href="/page.md">'),
                                                  **{"/page.md": Page(html())}), "markdown_version", "partial"),
    ("no markdown", bare, "markdown_version", "fail"),
    # read: says_what_it_does (embedded judge)
    ("says what it does", good, "says_what_it_does", "pass"),
    ("says nothing about itself", with_page(html(title="Welcome", description="", body="<h1>Welcome</h1><p>Hello there.</p>")), "says_what_it_does", "fail"),
    # find: mcp_registry
    ("no MCP server: the registry is not applicable", bare, "mcp_registry", "not_applicable"),
    # use: mcp_server_card
    ("card at /.well-known/mcp/server-card.json", good, "mcp_server_card", "pass"),
    ("card listed in the AI Catalog", good_but(**{"/.well-known/mcp/server-card.json": None,
                                                  "/.well-known/ai-catalog.json": j({"specVersion": "1.0", "entries": [
                                                      {"identifier": "urn:air:x", "type": "application/mcp-server-card+json", "url": "/mcp/server-card"}]}),
                                                  "/mcp/server-card": lambda o: j({"name": "test.site/notes", "version": "1", "description": "Notes.",
                                                                                   "remotes": [{"type": "streamable-http", "url": f"{o}/mcp"}]})}),
     "mcp_server_card", "pass"),
    ("draft card lacking its endpoint", good_but(**{"/.well-known/mcp/server-card.json": j({"serverInfo": {"name": "x", "version": "1"}})}),
     "mcp_server_card", "partial"),
    ("no card", bare, "mcp_server_card", "fail"),
    # use: mcp_endpoint
    ("MCP endpoint lists tools", good, "mcp_endpoint", "pass"),
    ("MCP endpoint behind OAuth", good_but(mcp=Page("", status=401, headers={"WWW-Authenticate": 'Bearer resource_metadata="https://x/.well-known/oauth-protected-resource"'})),
     "mcp_endpoint", "partial"),
    ("MCP endpoint with no tools", good_but(mcp=mcp_responder(tools=[])), "mcp_endpoint", "partial"),
    ("no MCP endpoint", bare, "mcp_endpoint", "fail"),
    # use: a2a_agent_card
    ("A2A 1.0 card", good, "a2a_agent_card", "pass"),
    ("A2A 0.3 card", good_but(**{"/.well-known/agent-card.json": lambda o: j({"name": "Lumen", "description": "Notes.", "url": f"{o}/a2a",
                                                                              "protocolVersion": "0.3.0", "preferredTransport": "JSONRPC",
                                                                              "skills": [{"id": "notes", "name": "Notes"}]})}),
     "a2a_agent_card", "pass"),
    ("A2A card only at the old path", good_but(**{"/.well-known/agent-card.json": None,
                                                  "/.well-known/agent.json": lambda o: j({"name": "L", "description": "N.", "url": f"{o}/a2a",
                                                                                          "skills": [{"id": "n", "name": "N"}]})}),
     "a2a_agent_card", "partial"),
    ("A2A card without skills", good_but(**{"/.well-known/agent-card.json": j({"name": "L", "description": "N.", "url": "http://x/a2a"})}),
     "a2a_agent_card", "partial"),
    ("no A2A card", bare, "a2a_agent_card", "fail"),
    # use: openapi
    ("OpenAPI linked by service-desc", good, "openapi", "pass"),
    ("OpenAPI found only by guessing", _combine(bare, {"/openapi.json": j({"openapi": "3.1.0", "info": {"title": "T"}, "paths": {"/a": {}}})}),
     "openapi", "partial"),
    ("OpenAPI without paths", good_but(**{"/openapi.json": j({"openapi": "3.1.0", "info": {"title": "T"}, "paths": {}})}), "openapi", "partial"),
    ("no OpenAPI", bare, "openapi", "fail"),
    # use: agent_payments
    ("UCP profile", good, "agent_payments", "pass"),
    ("x402 402 with payment requirements", good_but(**{"/.well-known/ucp": None,
                                                       "/.well-known/x402": lambda o: Page("{}", status=402, content_type="application/json", headers=x402_header(o))}),
     "agent_payments", "pass"),
    ("402 without x402 requirements", good_but(**{"/.well-known/ucp": None, "/.well-known/x402": Page("pay", status=402, content_type="text/plain")}),
     "agent_payments", "partial"),
    ("a price but no way to pay", good_but(**{"/.well-known/ucp": None, "/.well-known/x402": None}), "agent_payments", "fail"),
    ("no price, no payment: not applicable", bare, "agent_payments", "not_applicable"),
    # use: says_how_to_start, states_price (embedded judge)
    ("a concrete first call", good, "says_how_to_start", "pass"),
    ("only a generic get started", with_page(html(body="<main><h1>Lumen</h1><p>Lumen is a tool that helps teams. Get started today.</p></main>")),
     "says_how_to_start", "partial"),
    ("only contact sales", with_page(html(body="<main><h1>Lumen</h1><p>Lumen is a tool that helps teams. Contact sales to learn more.</p></main>")),
     "says_how_to_start", "fail"),
    ("a price with a unit", with_page(html(body="<main><h1>Lumen</h1><p>Pro costs $19 per month.</p></main>")), "states_price", "pass"),
    ("a bare number", with_page(html(body="<main><h1>Lumen</h1><p>Pro: $19.</p></main>")), "states_price", "partial"),
    ("price on request", with_page(html(body="<main><h1>Lumen</h1><p>Contact us for pricing.</p></main>")), "states_price", "fail"),
]


@pytest.mark.parametrize("build, check_id, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_each_check_gives_its_verdict_on_a_site_built_for_it(build, check_id, expected, site, scan, settings):
    server, origin = site()
    server.routes.update(build(origin))
    report = scan(origin + "/")
    got = verdict(report, check_id)
    assert got["status"] == expected, got
    assert got["evidence"] or expected == "not_applicable"
    if expected in ("fail", "partial") and check_id not in ("says_what_it_does",):
        assert got["fix"] and got["fix"]["text"]
    assert len(server.requests) <= settings.BEACON_MAX_REQUESTS
    assert report["requests_made"] == len(server.requests)
    assert not any(b'"tools/call"' in r["body"] for r in server.requests)


def test_a_paid_route_listed_in_the_openapi_document_is_tried_for_x402(site, scan):
    from tests.beacon.sites import x402_header

    server, origin = site()
    server.routes.update(good(origin))
    for path in ("/.well-known/ucp", "/.well-known/x402"):
        server.routes.pop(path)
    server.routes["/openapi.json"] = j({"openapi": "3.1.0", "info": {"title": "T"},
                                        "paths": {"/api/x402/notes": {"get": {}}, "/api/v1/notes": {"post": {}}}})
    server.routes["/api/x402/notes"] = Page("{}", status=402, content_type="application/json", headers=x402_header(origin))
    report = scan(origin + "/")
    payments = verdict(report, "agent_payments")
    assert payments["status"] == "pass", payments
    assert "/api/x402/notes" in payments["summary"]
