"""The MCP probe, both eras, never a tool call.

Legacy servers (protocol 2024-11-05 … 2025-11-25) answer `initialize`; the probe then sends
`notifications/initialized` and `tools/list` with the negotiated version (and the session id, if
the server gave one). Servers of the 2026-07-28 revision have no handshake: a modern-only server
answers `initialize` with an error naming the versions it supports, and the probe sends
`server/discover` then `tools/list` with the `MCP-Protocol-Version` and `Mcp-Method` headers. At most
three requests. Answers may be JSON or an event stream (`data:` lines).
"""

import json

from .fetcher import Fetched, Fetcher

LEGACY_VERSION = "2025-11-25"
MODERN_VERSION = "2026-07-28"
CLIENT_INFO = {"name": "SvcBeacon", "version": "1.0"}
ACCEPT = "application/json, text/event-stream"


def _message(response: Fetched, want_id: int) -> dict | None:
    """The JSON-RPC message with id `want_id` from a JSON or event-stream answer."""
    if not response.answered or not response.body:
        return None
    if "text/event-stream" in response.content_type:
        for line in response.text.splitlines():
            if line.startswith("data:"):
                try:
                    message = json.loads(line[5:].strip())
                except ValueError:
                    continue
                if isinstance(message, dict) and message.get("id") == want_id:
                    return message
        return None
    data = response.json()
    if isinstance(data, list):
        data = next((m for m in data if isinstance(m, dict) and m.get("id") == want_id), None)
    return data if isinstance(data, dict) else None


def _modern_meta() -> dict:
    return {"io.modelcontextprotocol/protocolVersion": MODERN_VERSION, "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
            "io.modelcontextprotocol/clientCapabilities": {}}


def probe(fetcher: Fetcher, url: str) -> dict:
    """Probe `url` as an MCP endpoint; return what was learned (era, server, tools, auth, requests, evidence)."""
    out: dict = {"url": url, "era": None, "server": None, "tools": [], "auth_required": False, "evidence": [], "error": None}
    base = {"Content-Type": "application/json"}
    init = fetcher.fetch(url, method="POST", accept=ACCEPT, headers=base, allow_redirects=False,
                         json={"jsonrpc": "2.0", "id": 1, "method": "initialize",
                               "params": {"protocolVersion": LEGACY_VERSION, "capabilities": {}, "clientInfo": CLIENT_INFO}})
    out["evidence"].append(init.evidence("initialize"))
    if init.error:
        out["error"] = init.error
        return out
    if init.status == 401:
        out["auth_required"] = True
        out["www_authenticate"] = init.headers.get("WWW-Authenticate", "")
        return out
    message = _message(init, 1)
    result = message.get("result") if message else None
    if isinstance(result, dict) and result.get("protocolVersion"):
        out["era"] = "legacy"
        version = str(result["protocolVersion"])
        out["server"] = result.get("serverInfo")
        headers = {**base, "MCP-Protocol-Version": version}
        session = init.headers.get("Mcp-Session-Id")
        if session and session.isascii() and session.isprintable():
            headers["Mcp-Session-Id"] = session
        done = fetcher.fetch(url, method="POST", accept=ACCEPT, headers=headers, allow_redirects=False,
                             json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        out["evidence"].append(done.evidence("notifications/initialized", excerpt=False))
        listed = fetcher.fetch(url, method="POST", accept=ACCEPT, headers=headers, allow_redirects=False,
                               json={"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
    else:
        error = message.get("error") if message else None
        text = json.dumps(error) if error else init.text[:2000]
        if MODERN_VERSION not in text and not (isinstance(error, dict) and error.get("code") in (-32022, -32020, -32021)):
            out["error"] = f"{url} does not answer as an MCP server (initialize got HTTP {init.status})."
            return out
        headers = {**base, "MCP-Protocol-Version": MODERN_VERSION, "Mcp-Method": "server/discover"}
        discover = fetcher.fetch(url, method="POST", accept=ACCEPT, headers=headers, allow_redirects=False,
                                 json={"jsonrpc": "2.0", "id": 2, "method": "server/discover", "params": {"_meta": _modern_meta()}})
        out["evidence"].append(discover.evidence("server/discover"))
        found = _message(discover, 2)
        result = found.get("result") if found else None
        if not isinstance(result, dict):
            out["error"] = f"{url} names the 2026 protocol but server/discover failed (HTTP {discover.status})."
            return out
        out["era"] = "2026"
        out["server"] = (result.get("_meta") or {}).get("io.modelcontextprotocol/serverInfo") if isinstance(result.get("_meta"), dict) else None
        headers = {**headers, "Mcp-Method": "tools/list"}
        listed = fetcher.fetch(url, method="POST", accept=ACCEPT, headers=headers, allow_redirects=False,
                               json={"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"_meta": _modern_meta()}})
    out["evidence"].append(listed.evidence("tools/list"))
    found = _message(listed, 2 if out["era"] == "legacy" else 3)
    result = found.get("result") if found else None
    tools = result.get("tools") if isinstance(result, dict) else None
    if isinstance(tools, list):
        out["tools"] = [
            {"name": t.get("name"), "has_description": bool(t.get("description")), "has_input_schema": isinstance(t.get("inputSchema"), dict)}
            for t in tools[:100] if isinstance(t, dict)
        ]
    else:
        out["error"] = f"tools/list did not answer with a list of tools (HTTP {listed.status})."
    return out
