"""The MCP probe against real SDK servers of both eras: tools are listed, never called."""

import pytest

from beacon.sample_site import Page
from tests.beacon.conftest import verdict
from tests.beacon.mcp_servers import McpServer
from tests.beacon.sites import good, j

pytestmark = pytest.mark.django_db


@pytest.fixture
def mcp_server():
    servers = []

    def make(**kwargs):
        server = McpServer(**kwargs)
        servers.append(server)
        return server

    yield make
    for server in servers:
        server.stop()


def _site_with_card_to(site, fake_dns, mcp):
    server, origin = site()
    fake_dns({"mcp.site.test": ["127.0.0.1"]})
    endpoint = f"http://mcp.site.test:{mcp.port}/mcp"
    server.routes.update(good(origin))
    server.routes.pop("/mcp")
    server.routes["/.well-known/mcp/server-card.json"] = j({"name": "test.site/notes", "version": "1.2.0", "description": "Notes.",
                                                           "remotes": [{"type": "streamable-http", "url": endpoint}]})
    return server, origin


def test_a_legacy_sdk_server_is_probed_with_the_handshake_and_no_tool_is_called(site, scan, fake_dns, mcp_server):
    mcp = mcp_server()
    server, origin = _site_with_card_to(site, fake_dns, mcp)
    report = scan(origin + "/")
    endpoint = verdict(report, "mcp_endpoint")
    assert endpoint["status"] == "pass", endpoint
    assert endpoint["details"]["era"] == "legacy"
    assert endpoint["details"]["tools"] == ["make_notes"]
    assert mcp.methods == ["initialize", "notifications/initialized", "tools/list"]
    assert mcp.tool_calls == []


def test_a_2026_only_server_is_probed_with_server_discover_and_no_tool_is_called(site, scan, fake_dns, mcp_server):
    mcp = mcp_server(modern_only=True)
    server, origin = _site_with_card_to(site, fake_dns, mcp)
    report = scan(origin + "/")
    endpoint = verdict(report, "mcp_endpoint")
    assert endpoint["status"] == "pass", endpoint
    assert endpoint["details"]["era"] == "2026"
    assert endpoint["details"]["tools"] == ["make_notes"]
    assert mcp.methods == ["initialize", "server/discover", "tools/list"]
    assert "tools/call" not in mcp.methods and mcp.tool_calls == []


def test_the_registry_entry_is_found_by_namespace_and_a_deprecated_one_is_partial(site, scan, settings):
    server, origin = site()
    server.routes.update(good(origin))
    settings.BEACON_MCP_REGISTRY_URL = origin + "/registry"
    entry = {"server": {"name": "test.site/notes", "version": "1", "description": "x"}, "_meta": {"io.modelcontextprotocol.registry/official": {"status": "active"}}}
    other = {"server": {"name": "com.other/tool", "version": "1", "description": "y"}}
    server.routes["/registry/v0.1/servers"] = j({"servers": [other, entry], "metadata": {"count": 2}})
    report = scan(origin + "/")
    assert verdict(report, "mcp_registry")["status"] == "pass"
    assert any("search=test.site" in r["path"] for r in server.requests)

    entry["_meta"]["io.modelcontextprotocol.registry/official"]["status"] = "deprecated"
    server.routes["/registry/v0.1/servers"] = j({"servers": [entry]})
    assert verdict(scan(origin + "/"), "mcp_registry")["status"] == "partial"

    server.routes["/registry/v0.1/servers"] = j({"servers": [other]})
    assert verdict(scan(origin + "/"), "mcp_registry")["status"] == "fail"

    server.routes["/registry/v0.1/servers"] = Page("oops", status=500, content_type="text/plain")
    assert verdict(scan(origin + "/"), "mcp_registry")["status"] == "error"


def test_the_registry_is_not_applicable_when_the_lookup_is_not_configured(site, scan):
    server, origin = site()
    server.routes.update(good(origin))
    assert verdict(scan(origin + "/"), "mcp_registry")["status"] == "not_applicable"
