"""The ASGI application in-process: tool parity with the REST schema, discovery documents, guards and scopes."""

import pytest
from django.core.asgi import get_asgi_application
from django.urls import resolve
from starlette.testclient import TestClient

from accounts import services as accounts
from surfaces import operations
from surfaces.asgi import application_create

pytestmark = pytest.mark.django_db(transaction=True)

BASE = "http://127.0.0.1:8000"
H = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}}


@pytest.fixture(scope="module")
def app():
    # The MCP session manager runs once per instance: one application and one lifespan for the module.
    with TestClient(application_create(get_asgi_application()), base_url=BASE) as client:
        yield client


def rpc(app, method, params=None, key=None, modern=True, **headers):
    extra = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method} if modern else {}
    if modern:
        params = {**(params or {}), "_meta": META}
        if method == "tools/call":
            extra["Mcp-Name"] = params["name"]
    if key:
        extra["Authorization"] = f"Bearer {key}"
    return app.post("/mcp", headers={**H, **extra, **headers}, json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}})


def served_tools(app) -> list[dict]:
    return rpc(app, "tools/list").json()["result"]["tools"]


def schema_routes(schema) -> dict:
    return {(method.upper(), path): spec for path, item in schema["paths"].items()
            for method, spec in item.items() if method in operations.HTTP_METHODS}


def expected_arguments(spec, schema) -> set[str]:
    names = {p["name"] if p["in"] != "header" else p["name"].lower().replace("-", "_")
             for p in spec.get("parameters", []) if p["in"] in ("path", "query", "header")}
    body = spec.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
    if body is not None:
        resolved = operations._resolve(body, schema["components"]["schemas"])
        names |= set(resolved.get("properties", {})) or {"body"}
    return names


def test_every_route_of_the_published_schema_is_a_tool_and_every_tool_is_a_route(app):
    """A new route without its tool, or a tool whose route is gone, fails here."""
    schema = app.get("/api/v1/openapi.json").json()
    routes = schema_routes(schema)
    tools = {tool["name"]: tool for tool in served_tools(app)}
    by_route = {(op.method, op.path): op for op in map(operations.operation, tools)}
    assert None not in by_route.values()
    missing = {route for route in routes if route not in by_route and not operations.excluded_reason(*route)}
    assert not missing, f"routes without a tool (add the tool, or exclude the route with a reason): {sorted(missing)}"
    orphans = set(by_route) - set(routes)
    assert not orphans, f"tools without a route: {sorted(orphans)}"
    for route, op in by_route.items():
        tool = tools[op.name]
        assert set(tool["inputSchema"]["properties"]) == expected_arguments(routes[route], schema), op.name
        assert tool["description"].endswith(f"REST: {route[0]} {route[1]}")
        assert tool["annotations"]["readOnlyHint"] is (route[0] == "GET")
        concrete = route[1]
        for name in op.path_params:
            concrete = concrete.replace("{" + name + "}", "00000000-0000-0000-0000-000000000001")
        assert resolve(concrete).func is not None


def test_the_tools_that_agents_call_most_have_short_names(app):
    names = [tool["name"] for tool in served_tools(app)]
    assert {"evaluate", "evaluate_batch", "atlas_lookup", "tower_decide", "tower_action_create", "preflight_check",
            "signup_create", "api_keys_create", "api_keys_destroy", "usage", "plans"} <= set(names)
    assert len(names) == len(set(names)) and names == [tool["name"] for tool in served_tools(app)]  # stable order


def test_a_tools_input_schema_is_the_rest_body(app):
    tools = {tool["name"]: tool for tool in served_tools(app)}
    evaluate = tools["evaluate"]["inputSchema"]
    assert evaluate["required"] == ["input"] and {"input", "rule_set", "metadata", "context", "idempotency_key"} <= set(evaluate["properties"])
    assert "$ref" not in str(evaluate)
    revoke = tools["api_keys_destroy"]["inputSchema"]
    assert revoke["required"] == ["key_id"] and revoke["properties"]["key_id"]["format"] == "uuid"


def test_both_protocol_eras_are_served(app):
    legacy = rpc(app, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                     "clientInfo": {"name": "t", "version": "1"}}, modern=False).json()["result"]
    assert legacy["protocolVersion"] == "2025-11-25" and legacy["serverInfo"]["name"] == "svc"
    discover = rpc(app, "server/discover").json()["result"]
    assert MODERN in discover["supportedVersions"]
    assert rpc(app, "tools/list", modern=False).json()["result"]["tools"]


def test_account_tools_issue_and_revoke_keys_with_the_callers_key(app, alice):
    issued = rpc(app, "tools/call", {"name": "api_keys_create", "arguments": {"name": "from-mcp", "scope": "evaluate"}},
                 key=alice.key).json()["result"]
    assert not issued["isError"] and issued["structuredContent"]["key"].startswith("svc_live_")
    assert issued["_meta"]["io.svc/http"]["status"] == 201
    key_id = issued["structuredContent"]["id"]
    # An evaluate key may not use a full-scope route: the REST 403 and its message.
    rest = alice.client.get("/api/v1/api-keys")
    limited = rpc(app, "tools/call", {"name": "api_keys_retrieve", "arguments": {}}, key=issued["structuredContent"]["key"]).json()["result"]
    evaluate_key_rest = app.get("/api/v1/api-keys", headers={"Authorization": f"Bearer {issued['structuredContent']['key']}"})
    assert rest.status_code == 200 and evaluate_key_rest.status_code == 403
    assert limited["isError"] and limited["content"][0]["text"] == evaluate_key_rest.json()["error"]
    revoked = rpc(app, "tools/call", {"name": "api_keys_destroy", "arguments": {"key_id": key_id}}, key=alice.key).json()["result"]
    assert revoked["structuredContent"] == {"id": key_id, "is_active": False}
    events = rpc(app, "tools/call", {"name": "audit_log_retrieve", "arguments": {"limit": 5}}, key=alice.key).json()["result"]
    assert events["structuredContent"]["events"][0]["action"] == "accounts.key.revoked"


def test_another_tenants_object_is_a_404_as_over_rest(app, alice, bob):
    issued = accounts.api_key_issue(org=alice.org, name="alice-only")
    result = rpc(app, "tools/call", {"name": "api_keys_destroy", "arguments": {"key_id": str(issued.key.pk)}}, key=bob.key).json()["result"]
    assert result["isError"] and result["structuredContent"]["status"] == 404


def test_a_missing_path_argument_and_an_unknown_tool_are_refused(app, alice):
    missing = rpc(app, "tools/call", {"name": "api_keys_destroy", "arguments": {}}, key=alice.key).json()["result"]
    assert missing["isError"] and missing["content"][0]["text"] == "key_id: This field is required."
    unknown = rpc(app, "tools/call", {"name": "no_such_tool", "arguments": {}}).json()
    assert "no_such_tool" in unknown["error"]["message"]


def test_a_foreign_host_is_refused_by_the_dns_rebinding_guard(app):
    response = rpc(app, "tools/list", Host="evil.example")
    assert response.status_code == 421


def test_the_server_card_is_served_at_every_location_in_use_and_listed_in_the_ai_catalog(app, settings):
    cards = [app.get(path) for path in ("/mcp/server-card", "/.well-known/mcp/server-card.json", "/.well-known/mcp.json")]
    assert all(card.status_code == 200 for card in cards)
    assert all(card.json() == cards[0].json() for card in cards)
    card = cards[0].json()
    assert card["name"].count("/") == 1 and len(card["description"]) <= 100 and card["version"]
    assert card["remotes"][0] == {**card["remotes"][0], "type": "streamable-http", "url": f"{settings.BASE_URL}/mcp"}
    assert cards[0].headers["access-control-allow-origin"] == "*"
    catalog = app.get("/.well-known/ai-catalog.json")
    assert catalog.headers["content-type"].startswith("application/ai-catalog+json")
    entry = catalog.json()["entries"][0]
    assert entry["type"] == "application/mcp-server-card+json" and entry["data"] == card


def test_the_api_catalog_and_link_headers_point_at_the_schema_and_the_docs(app, settings):
    catalog = app.get("/.well-known/api-catalog")
    assert catalog.status_code == 200 and catalog.headers["content-type"].startswith("application/linkset+json")
    entry = catalog.json()["linkset"][0]
    assert entry["service-desc"][0]["href"] == f"{settings.BASE_URL}/api/v1/openapi.json"
    assert entry["service-doc"][0]["href"] == f"{settings.BASE_URL}/docs"
    assert app.head("/.well-known/api-catalog").status_code == 200
    for path in ("/", "/docs", "/llms.txt", "/api/v1/plans"):
        link = app.get(path).headers["link"]
        assert 'rel="service-desc"' in link and 'rel="service-doc"' in link and 'rel="describedby"' in link
    assert "link" not in app.post("/mcp", headers=H, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}).headers


def test_the_agent_card_carries_both_protocol_versions_and_the_bearer_scheme(app, settings):
    card = app.get("/.well-known/agent-card.json").json()
    assert [(i["protocolVersion"], i["url"]) for i in card["supportedInterfaces"]] == [
        ("1.0", f"{settings.BASE_URL}/a2a"), ("0.3", f"{settings.BASE_URL}/a2a")]
    assert card["protocolVersion"] == "0.3" and card["url"] == f"{settings.BASE_URL}/a2a"
    assert [skill["id"] for skill in card["skills"]] == ["evaluate", "lookup"]
    assert card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"] == "bearer"


def test_a2a_text_is_evaluated_without_a_key_within_the_keyless_limit(app):
    reply = app.post("/a2a", headers={"A2A-Version": "1.0"}, json={"jsonrpc": "2.0", "id": "1", "method": "SendMessage", "params": {
        "message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "My password is hunter2, keep it safe."}]}}})
    parts = reply.json()["result"]["message"]["parts"]
    assert parts[0]["data"]["recommended_action"] and parts[1]["text"].startswith("recommended_action=")
    unknown = app.post("/a2a", json={"jsonrpc": "2.0", "id": "2", "method": "message/send", "params": {"message": {
        "messageId": "m2", "role": "user", "kind": "message", "metadata": {"skill": "nope"},
        "parts": [{"kind": "text", "text": "hi"}]}}}).json()["result"]
    assert unknown["parts"][0]["data"]["status"] == 400


def test_robots_txt_names_the_sitemap_and_the_sitemap_lists_the_pages(app, settings):
    robots = app.get("/robots.txt")
    assert robots.status_code == 200 and f"Sitemap: {settings.BASE_URL}/sitemap.xml" in robots.text
    sitemap = app.get("/sitemap.xml")
    assert sitemap.headers["content-type"].startswith("application/xml")
    assert f"<loc>{settings.BASE_URL}/docs</loc>" in sitemap.text


def test_the_home_page_in_markdown_is_llms_txt(app):
    llms = app.get("/llms.txt").text
    negotiated = app.get("/", headers={"Accept": "text/markdown"})
    assert negotiated.headers["content-type"].startswith("text/markdown") and negotiated.text == llms
    assert "accept" in negotiated.headers["vary"].lower()
    assert app.get("/index.md").text == llms
    html = app.get("/", headers={"Accept": "text/html,*/*;q=0.8"})
    assert html.headers["content-type"].startswith("text/html")
    assert 'rel="alternate"; type="text/markdown"' in html.headers["link"]
