"""Can an agent call the product without a person: MCP card and endpoint, A2A card, OpenAPI, payments."""

import base64
import json

from .. import mcp_probe
from ..constants import ERROR, FAIL, NOT_APPLICABLE, PARTIAL, PASS
from ..fetcher import same_site
from ..site import JSON_ACCEPT, Result, Site, fix


def _card_endpoint(card: dict) -> str | None:
    remotes = card.get("remotes")
    if isinstance(remotes, list):
        for remote in remotes:
            if isinstance(remote, dict) and isinstance(remote.get("url"), str) and remote.get("type", "streamable-http") in ("streamable-http", "sse"):
                return remote["url"]
    transport = card.get("transport")
    if isinstance(transport, dict) and isinstance(transport.get("endpoint"), str):
        return transport["endpoint"]
    if isinstance(card.get("endpoint"), str):
        return card["endpoint"]
    return None


def _card_shape(card: dict) -> tuple[str | None, list[str]]:
    """Which card shape this is and what it lacks: the 2026 card (SEP-2127) or the earlier draft (SEP-1649)."""
    if "serverInfo" in card:
        info = card.get("serverInfo") if isinstance(card.get("serverInfo"), dict) else {}
        missing = [f"serverInfo.{k}" for k in ("name", "version") if not info.get(k)]
        if not _card_endpoint(card):
            missing.append("transport.endpoint")
        return "draft (SEP-1649)", missing
    missing = [k for k in ("name", "version", "description") if not isinstance(card.get(k), str) or not card.get(k)]
    if isinstance(card.get("name"), str) and card["name"].count("/") != 1:
        missing.append("name in reverse-DNS form with one '/'")
    if not _card_endpoint(card):
        missing.append("remotes[].url")
    return "server card (2026)", missing


def card_snippet(site: Site) -> str:
    return json.dumps({
        "$schema": "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json",
        "name": f"{site.reversed_domain}/server", "version": "1.0.0", "description": "What the server does, in one line.",
        "remotes": [{"type": "streamable-http", "url": f"{site.origin}/mcp", "supportedProtocolVersions": ["2025-11-25", "2026-07-28"]}],
    }, indent=2)


def mcp_server_card(site: Site) -> Result:
    found = site.mcp_card
    where = "Serve the card at /.well-known/mcp/server-card.json (and list it in /.well-known/ai-catalog.json, or at <mcp-url>/server-card)."
    if found is None:
        tried = [site.ai_catalog] + [site.get(u, accept="application/mcp-server-card+json, application/json;q=0.9")
                                     for u in [site.at("/.well-known/mcp/server-card.json"), *site.mcp_card_fallbacks()]]
        if all(t.error for t in tried):
            return Result(ERROR, "No MCP server card location could be fetched.", [t.evidence(excerpt=False) for t in tried])
        return Result(FAIL, "No MCP server card was found at any location in use.", [t.evidence(excerpt=False) for t in tried],
                      fix(where, card_snippet(site)))
    url, card, how = found
    shape, missing = _card_shape(card)
    endpoint = _card_endpoint(card)
    evidence = [{"url": url, "status": 200, "excerpt": json.dumps(card)[:200], "note": f"Found by {how}; {shape}."}]
    details = {"location": how, "shape": shape, "endpoint": endpoint}
    if missing:
        return Result(PARTIAL, f"An MCP server card was found ({how}) but lacks {', '.join(missing)}.", evidence,
                      fix("Complete the server card.", card_snippet(site)), details)
    if endpoint and not same_site(endpoint, site.origin):
        return Result(PARTIAL, "The MCP server card names an endpoint on another site.", evidence,
                      fix("Name the endpoint on your own domain.", card_snippet(site)), details)
    return Result(PASS, f"An MCP server card ({shape}) was found by {how}.", evidence, details=details)


def mcp_endpoint_candidates(site: Site) -> list[str]:
    candidates = []
    if site.mcp_card is not None:
        endpoint = _card_endpoint(site.mcp_card[1])
        if endpoint:
            candidates.append(endpoint)
    for entry in site.registry_entries:
        candidates += [u for u in entry["remotes"] if same_site(u, site.origin)]
    candidates.append(site.at("/mcp"))
    unique = []
    for url in candidates:
        if url not in unique and same_site(url, site.origin):
            unique.append(url)
    return unique


def mcp_endpoint(site: Site) -> Result:
    url = mcp_endpoint_candidates(site)[0]
    found = mcp_probe.probe(site.fetcher, url)
    site.mcp_probe_result = found
    details = {k: found[k] for k in ("url", "era", "server", "auth_required")} | {"tools": [t["name"] for t in found["tools"]][:50]}
    evidence = found["evidence"]
    snippet = ("Serve MCP over streamable HTTP at /mcp: answer initialize (protocol 2025-11-25) and, for 2026 clients,\n"
               "server/discover (2026-07-28); list the tools with a description and an inputSchema each.")
    if found["auth_required"]:
        metadata = "resource_metadata" in found.get("www_authenticate", "")
        note = " and points to its OAuth metadata" if metadata else ", without resource_metadata in WWW-Authenticate"
        return Result(PARTIAL, f"The MCP endpoint {url} asks for authorization{note}; its tools could not be listed.", evidence,
                      fix("Let agents discover the tools without a key, or publish OAuth protected-resource metadata.",
                          'WWW-Authenticate: Bearer resource_metadata="' + site.at("/.well-known/oauth-protected-resource") + '"'), details)
    if found["era"] is None:
        if found["error"] and all("error" in e for e in evidence):
            return Result(ERROR, f"The MCP endpoint {url} could not be reached: {found['error']}", evidence, details=details)
        return Result(FAIL, "No MCP endpoint answers.", evidence, fix("Run an MCP server for the product.", snippet), details)
    tools = found["tools"]
    complete = [t for t in tools if t["name"] and t["has_description"] and t["has_input_schema"]]
    era = "2026 (server/discover)" if found["era"] == "2026" else "handshake (initialize)"
    if complete:
        return Result(PASS, f"The MCP endpoint answers ({era}) and lists {len(tools)} tools; no tool was called.", evidence, details=details)
    if tools:
        return Result(PARTIAL, f"The MCP endpoint lists {len(tools)} tools, but without descriptions or input schemas.", evidence,
                      fix("Give every tool a description and an inputSchema.", snippet), details)
    return Result(PARTIAL, f"The MCP endpoint answers ({era}) but lists no tools.", evidence, fix("List the product's operations as tools.", snippet), details)


def a2a_agent_card(site: Site) -> Result:
    current = site.agent_card_response
    legacy = site.get(site.at("/.well-known/agent.json"), accept=JSON_ACCEPT) if not current.ok else None
    response, path = (current, "/.well-known/agent-card.json") if current.ok or legacy is None or not legacy.ok else (legacy, "/.well-known/agent.json")
    snippet = json.dumps({
        "name": site.host, "description": "What the agent does.", "version": "1.0.0",
        "supportedInterfaces": [{"url": f"{site.origin}/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["application/json"],
        "skills": [{"id": "main", "name": "Main skill", "description": "What it does.", "tags": ["example"]}],
    }, indent=2)
    evidence = [current.evidence(excerpt=current.ok)] + ([legacy.evidence(excerpt=legacy.ok)] if legacy is not None else [])
    if not response.ok:
        if current.error and (legacy is None or legacy.error):
            return Result(ERROR, "The A2A agent card could not be fetched.", evidence)
        return Result(FAIL, "There is no A2A agent card.", evidence, fix("Publish an agent card at /.well-known/agent-card.json (never messaged by Beacon).", snippet))
    card = response.json()
    if not isinstance(card, dict):
        return Result(PARTIAL, f"{path} is not JSON.", evidence, fix("Serve the agent card as JSON.", snippet))
    interfaces = card.get("supportedInterfaces")
    if isinstance(interfaces, list) and interfaces:
        version = "1.0"
        endpoints = [i for i in interfaces if isinstance(i, dict) and i.get("url") and i.get("protocolBinding")]
    else:
        version = "0.3" if card.get("url") else None
        endpoints = [card["url"]] if card.get("url") else []
    skills = [s for s in card.get("skills") or [] if isinstance(s, dict) and s.get("id") and s.get("name")]
    missing = [k for k in ("name", "description") if not card.get(k)] + ([] if endpoints else ["an interface URL"]) + ([] if skills else ["skills"])
    details = {"version": version, "path": path, "skills": [s["id"] for s in skills][:20],
               "ap2": any("ap2" in str(e.get("uri", "")).lower() for e in (card.get("capabilities") or {}).get("extensions") or [] if isinstance(e, dict))
               if isinstance(card.get("capabilities"), dict) else False}
    if missing:
        return Result(PARTIAL, f"The agent card at {path} lacks {', '.join(missing)}.", evidence, fix("Complete the agent card (A2A 1.0).", snippet), details)
    if path.endswith("agent.json"):
        return Result(PARTIAL, "The agent card is only at the pre-0.3 path /.well-known/agent.json.", evidence,
                      fix("Serve it at /.well-known/agent-card.json too.", snippet), details)
    return Result(PASS, f"An A2A agent card (version {version}) lists {len(skills)} skills; the agent was not messaged.", evidence, details=details)


def openapi(site: Site) -> Result:
    snippet = (f'Link: <{site.at("/openapi.json")}>; rel="service-desc"\n\n'
               '# /.well-known/api-catalog (application/linkset+json, RFC 9727)\n'
               + json.dumps({"linkset": [{"anchor": site.at("/api/"), "service-desc": [{"href": site.at("/openapi.json"), "type": "application/openapi+json"}]}]}))
    tried = []
    catalog = site.api_catalog.ok and isinstance(site.api_catalog.json(), dict) and "linkset" in site.api_catalog.json()
    for url in site.openapi_candidates[:2]:
        response = site.get(url, accept="application/json, application/yaml;q=0.9, */*;q=0.5")
        tried.append(response)
        if not response.ok:
            continue
        document = response.json()
        if document is None:
            try:
                import yaml

                document = yaml.safe_load(response.text[:1_000_000])
            except Exception:  # noqa: BLE001 - not YAML either
                document = None
        if not isinstance(document, dict) or not (document.get("openapi") or document.get("swagger")):
            continue
        info = document.get("info") if isinstance(document.get("info"), dict) else {}
        paths = document.get("paths") if isinstance(document.get("paths"), dict) else {}
        site.openapi_paths = paths
        version = str(document.get("openapi") or document.get("swagger"))
        details = {"url": response.final_url or url, "version": version, "title": info.get("title"), "paths": len(paths), "api_catalog": catalog}
        evidence = [response.evidence(f"OpenAPI {version}: {len(paths)} paths.", excerpt=False)]
        if not info.get("title") or not paths:
            return Result(PARTIAL, "An OpenAPI document was found but has no title or no paths.", evidence, fix("Describe every route.", snippet), details)
        if not catalog and not site.links_with("service-desc"):
            return Result(PARTIAL, f"An OpenAPI {version} document with {len(paths)} paths was found only by guessing its URL.", evidence,
                          fix("Point agents to it with a Link header or an RFC 9727 api-catalog.", snippet), details)
        return Result(PASS, f"An OpenAPI {version} document describes {len(paths)} paths.", evidence, details=details)
    evidence = [t.evidence(excerpt=False) for t in tried] + [site.api_catalog.evidence("api-catalog", excerpt=False)]
    if tried and all(t.error for t in tried):
        return Result(ERROR, "No OpenAPI document could be fetched.", evidence)
    return Result(FAIL, "No OpenAPI description was found.", evidence, fix("Publish an OpenAPI document and link it.", snippet))


def _x402(response) -> dict | None:
    header = response.headers.get("PAYMENT-REQUIRED")
    if header:
        try:
            data = json.loads(base64.b64decode(header + "=" * (-len(header) % 4)))
        except (ValueError, TypeError):
            data = None
        if isinstance(data, dict) and isinstance(data.get("accepts"), list):
            return {"version": data.get("x402Version", 2), "accepts": len(data["accepts"])}
    body = response.json()
    if isinstance(body, dict) and isinstance(body.get("accepts"), list) and "x402Version" in body:
        return {"version": body.get("x402Version"), "accepts": len(body["accepts"])}
    return None


def _required_parameters(operation) -> int:
    if not isinstance(operation, dict) or not isinstance(operation.get("parameters"), list):
        return 0
    return sum(1 for parameter in operation["parameters"] if isinstance(parameter, dict) and parameter.get("required"))


def agent_payments(site: Site, *, states_price: str) -> Result:
    signals, evidence, partial = [], [], []
    probed = [site.get(site.x402_candidate, accept=JSON_ACCEPT)]
    if probed[0].status != 402:
        # A paid GET route the OpenAPI document lists (a path naming x402) answers 402 when it is one: one request.
        paid = [path for path, item in getattr(site, "openapi_paths", {}).items()
                if "x402" in str(path).lower() and "{" not in str(path) and isinstance(item, dict) and "get" in item]
        # A route that needs no parameter answers 402 to a bare GET; one with a required query may answer 400 first.
        paid.sort(key=lambda path: _required_parameters(getattr(site, "openapi_paths", {})[path]["get"]))
        if paid:
            probed.append(site.get(site.at(paid[0]), accept=JSON_ACCEPT))
    for response in site.payment_required_answers():
        x402 = _x402(response)
        if x402:
            signals.append(f"x402 v{x402['version']} at {response.final_url or response.url}")
            evidence.append(response.evidence(f"HTTP 402 with x402 v{x402['version']} payment requirements.", excerpt=False))
        else:
            partial.append(response)
    for path, name, key in (("/.well-known/ucp", "UCP profile", "ucp"), ("/.well-known/acp.json", "ACP discovery document", None)):
        response = site.get(site.at(path), accept=JSON_ACCEPT)
        probed.append(response)
        data = response.json() if response.ok else None
        if isinstance(data, dict) and data and (key is None or key in data):
            signals.append(f"{name} at {path}")
            evidence.append(response.evidence(name))
    card = site.agent_card_response.json() if site.agent_card_response.ok else None
    extensions = ((card or {}).get("capabilities") or {}).get("extensions") if isinstance(card, dict) and isinstance(card.get("capabilities"), dict) else None
    if isinstance(extensions, list) and any(isinstance(e, dict) and "ap2" in str(e.get("uri", "")).lower() for e in extensions):
        signals.append("AP2 extension in the A2A agent card")
    snippet = ("Answer paid routes with HTTP 402 and x402 payment requirements (header PAYMENT-REQUIRED, x402Version 2),\n"
               "or publish /.well-known/ucp or /.well-known/acp.json for agent checkout.")
    if signals:
        return Result(PASS, "Agents can pay: " + "; ".join(signals) + ".", evidence, details={"signals": signals})
    if partial:
        return Result(PARTIAL, "A route answers 402 but without x402 payment requirements.", [r.evidence() for r in partial[:3]],
                      fix("Describe how to pay in the 402 answer (x402).", snippet))
    if states_price not in (PASS, PARTIAL):
        return Result(NOT_APPLICABLE, "The site states no price and shows no agent payment, so this is not counted.")
    return Result(FAIL, "The site states a price but offers agents no way to pay.", [p.evidence(excerpt=False) for p in probed], fix("Let agents pay without a person.", snippet))
