"""A small local web server for sites Beacon can scan without the internet: the sample site, tests, the benchmark.

`LocalSite(routes)` serves a dict of path -> `Page` on 127.0.0.1 at a free port, in a thread, and
records every request it gets (method, path, headers). `sample_routes(origin)` is the sample
site: a product page made to pass most checks, whose real scan is the report at GET /api/v1/beacon/sample.
"""

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Page:
    body: bytes | str = b""
    status: int = 200
    content_type: str = "text/html; charset=utf-8"
    headers: dict = field(default_factory=dict)
    delay: float = 0.0

    def data(self) -> bytes:
        return self.body.encode() if isinstance(self.body, str) else self.body


class LocalSite:
    """Serves `routes` (path -> Page, or a callable(handler) -> Page) until `stop()`."""

    def __init__(self, routes: dict[str, "Page | Callable"] | None = None, *, host: str = "127.0.0.1"):
        self.routes = routes or {}
        self.requests: list[dict] = []
        site = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _serve(self):
                length = int(self.headers.get("Content-Length") or 0)
                self.body = self.rfile.read(length) if length else b""
                site.requests.append({"method": self.command, "path": self.path, "headers": dict(self.headers), "body": self.body})
                key = self.path.split("?")[0] if self.path.split("?")[0] in site.routes else self.path
                route = site.routes.get(key) or site.routes.get(self.path)
                page = route(self) if callable(route) else route
                if page is None:
                    page = Page("not found", status=404, content_type="text/plain")
                if page.delay:
                    time.sleep(page.delay)
                data = page.data()
                self.send_response(page.status)
                if page.content_type:
                    self.send_header("Content-Type", page.content_type)
                for name, value in page.headers.items():
                    self.send_header(name, value)
                if "Content-Length" not in page.headers:
                    self.send_header("Content-Length", str(len(data) if self.command != "HEAD" else len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    try:
                        self.wfile.write(data)
                    except (BrokenPipeError, ConnectionResetError):
                        pass

            do_GET = do_POST = do_HEAD = do_DELETE = do_PUT = _serve

        self.server = ThreadingHTTPServer((host, 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> "LocalSite":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


SAMPLE_NAME = "sample.beacon.example"

SAMPLE_HTML = """<!doctype html>
<html lang="en"><head>
<title>Lumen Notes — an API that turns meeting audio into notes</title>
<meta name="description" content="Lumen Notes is an API that turns meeting recordings into searchable notes and action items, for agents and teams.">
<link rel="alternate" type="text/markdown" href="/index.html.md">
<link rel="describedby" href="/llms.txt">
<script type="application/ld+json">{"@context": "https://schema.org", "@type": "SoftwareApplication", "name": "Lumen Notes",
 "description": "An API that turns meeting audio into notes.", "applicationCategory": "BusinessApplication",
 "offers": {"@type": "Offer", "price": "19", "priceCurrency": "USD"}}</script>
</head><body><main>
<h1>Lumen Notes</h1>
<p>Lumen Notes is an API that turns meeting recordings into searchable notes and action items for agents and teams.
Send a recording, get back a summary, decisions, owners and dates, in JSON or Markdown.</p>
<h2>Start in one call</h2>
<p>Get an API key with POST /api/v1/signup, then send audio to POST /api/v1/notes with the key as a bearer token.
Agents can also use the MCP server at /mcp, which lists the same operations as tools.</p>
<h2>Pricing</h2>
<p>The free plan covers 60 minutes of audio a month. Pro costs $19 per month for 2,000 minutes; extra minutes are $0.01 each.</p>
<h2>What you get</h2>
<ul><li>Speaker-attributed transcripts in 40 languages, with timestamps for every sentence.</li>
<li>Decisions and action items extracted with their owners and due dates, ready for a task tracker.</li>
<li>Webhooks when a recording is processed, signed so that your agent can trust them.</li>
<li>An OpenAPI description at /openapi.json, an llms.txt guide, and Markdown versions of every page.</li></ul>
<p>Recordings are deleted after processing unless you ask us to keep them; notes stay in your account until you delete them.
Every request is logged in an audit trail your organization can read, and keys can be scoped to read-only use.
The service runs in two regions and publishes its status and incident history on a public page.</p>
</main></body></html>"""

SAMPLE_MD = """# Lumen Notes

Lumen Notes is an API that turns meeting recordings into searchable notes and action items for agents and teams.

## Start in one call

Get an API key with `POST /api/v1/signup`, then send audio to `POST /api/v1/notes`.

## Pricing

Free: 60 minutes a month. Pro: $19 per month for 2,000 minutes.
"""

SAMPLE_LLMS = """# Lumen Notes

> An API that turns meeting recordings into searchable notes and action items, for agents and teams.

Get a key with POST /api/v1/signup; send audio to POST /api/v1/notes. Pro costs $19 per month.

## Docs

- [Quickstart](/docs/quickstart.md): the first call
- [OpenAPI](/openapi.json): the API description

## Optional

- [Pricing](/pricing.md)
"""


def sample_routes(origin: str, *, mcp_url: str | None = None, registry: bool = True) -> dict:
    """The sample site's pages, with absolute URLs on `origin` (and its MCP endpoint at `mcp_url`)."""
    mcp_url = mcp_url or f"{origin}/mcp"
    host = origin.split("://", 1)[1].split(":")[0]
    reversed_domain = ".".join(reversed(host.split(".")))
    card = {"$schema": "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json",
            "name": f"{reversed_domain}/notes", "version": "1.2.0", "description": "Meeting audio to notes.",
            "remotes": [{"type": "streamable-http", "url": mcp_url, "supportedProtocolVersions": ["2025-11-25"]}]}
    agent_card = {"name": "Lumen Notes", "description": "Turns meeting audio into notes.", "version": "1.0.0",
                  "supportedInterfaces": [{"url": f"{origin}/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
                  "capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["application/json"],
                  "skills": [{"id": "notes", "name": "Make notes", "description": "Notes from a recording.", "tags": ["notes"]}]}
    openapi = {"openapi": "3.1.0", "info": {"title": "Lumen Notes API", "version": "1.0"},
               "paths": {"/api/v1/signup": {"post": {"operationId": "signup"}}, "/api/v1/notes": {"post": {"operationId": "notes"}}}}
    x402 = {"x402Version": 2, "error": "Payment required", "resource": {"url": f"{origin}/api/x402/notes"},
            "accepts": [{"scheme": "exact", "network": "eip155:8453", "amount": "10000", "asset": "USDC", "payTo": "0x0"}]}
    import base64

    routes = {
        "/": Page(SAMPLE_HTML, headers={"Link": '</openapi.json>; rel="service-desc", </llms.txt>; rel="describedby"', "Vary": "Accept"}),
        "/robots.txt": Page(f"User-agent: *\nAllow: /\n\nUser-agent: GPTBot\nDisallow: /\n\nSitemap: {origin}/sitemap.xml\n", content_type="text/plain"),
        "/sitemap.xml": Page(f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
                             f"<url><loc>{origin}/</loc></url><url><loc>{origin}/docs/quickstart</loc></url></urlset>",
                             content_type="application/xml"),
        "/llms.txt": Page(SAMPLE_LLMS, content_type="text/plain; charset=utf-8"),
        "/llms-full.txt": Page(SAMPLE_LLMS + "\n" + SAMPLE_MD, content_type="text/plain; charset=utf-8"),
        "/index.html.md": Page(SAMPLE_MD, content_type="text/markdown; charset=utf-8"),
        "/.well-known/mcp/server-card.json": Page(json.dumps(card), content_type="application/json"),
        "/.well-known/agent-card.json": Page(json.dumps(agent_card), content_type="application/json"),
        "/.well-known/api-catalog": Page(json.dumps({"linkset": [{"anchor": f"{origin}/api/v1/", "service-desc": [{"href": f"{origin}/openapi.json"}]}]}),
                                         content_type="application/linkset+json"),
        "/openapi.json": Page(json.dumps(openapi), content_type="application/json"),
        "/.well-known/x402": Page(json.dumps(x402), status=402, content_type="application/json",
                                  headers={"PAYMENT-REQUIRED": base64.b64encode(json.dumps(x402).encode()).decode()}),
        "/.well-known/ucp": Page(json.dumps({"ucp": {"version": "2026-04-08", "services": {"dev.ucp.shopping": []}}}), content_type="application/json"),
    }
    if registry:
        routes["/registry/v0.1/servers"] = Page(json.dumps({"servers": [{"server": {"name": f"{reversed_domain}/notes", "description": "Notes",
                                                                                      "version": "1.2.0", "remotes": [{"type": "streamable-http", "url": mcp_url}]},
                                                                          "_meta": {"io.modelcontextprotocol.registry/official": {"status": "active"}}}],
                                                             "metadata": {"count": 1}}), content_type="application/json")
    return routes


def mcp_responder(tools: list[dict] | None = None, *, calls: list | None = None) -> Callable:
    """A plain JSON-RPC MCP endpoint of the 2025-11-25 era (no SDK needed): initialize, tools/list; records tools/call."""
    tools = tools if tools is not None else [
        {"name": "make_notes", "description": "Notes from a recording URL.",
         "inputSchema": {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]}}]

    def handle(handler) -> Page:
        if handler.command != "POST":
            return Page("", status=405, content_type="")
        try:
            message = json.loads(handler.body or b"null")
        except ValueError:
            return Page(json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}), status=400, content_type="application/json")
        method = message.get("method") if isinstance(message, dict) else None
        if method == "initialize":
            result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "lumen-notes", "version": "1.2.0"}}
        elif method == "tools/list":
            result = {"tools": tools}
        elif isinstance(method, str) and method.startswith("notifications/"):
            return Page("", status=202, content_type="")
        else:
            if method == "tools/call" and calls is not None:
                calls.append(message)
            return Page(json.dumps({"jsonrpc": "2.0", "id": message.get("id"), "error": {"code": -32601, "message": "Method not found"}}),
                        content_type="application/json")
        return Page(json.dumps({"jsonrpc": "2.0", "id": message.get("id"), "result": result}), content_type="application/json")

    return handle


def serve_sample() -> tuple[LocalSite, str]:
    """The sample site on loopback, with its MCP endpoint and registry; returns (server, its URL by name)."""
    site = LocalSite()
    origin = f"http://{SAMPLE_NAME}:{site.port}"
    site.routes.update(sample_routes(origin, registry=False))
    site.routes["/mcp"] = mcp_responder()
    # Two gaps, so that the sample shows failures and their fixes: no A2A agent card, and the MCP
    # server is not in the registry (the sample registry answers, with nothing for this site).
    site.routes.pop("/.well-known/agent-card.json")
    site.routes["/registry/v0.1/servers"] = Page(json.dumps({"servers": [], "metadata": {"count": 0}}), content_type="application/json")
    return site, origin + "/"


@__import__("contextlib").contextmanager
def names_resolve_to_loopback(names: tuple[str, ...] = (SAMPLE_NAME,)):
    """Within the block, `names` resolve to 127.0.0.1 (the sample site's name, for the sample scan and the benchmark)."""
    import socket

    real = socket.getaddrinfo
    wanted = {n.lower() for n in names}

    def getaddrinfo(host, port, family=0, type=0, proto=0, flags=0):
        name = host.decode() if isinstance(host, bytes) else host
        if isinstance(name, str) and name.lower().rstrip(".") in wanted:
            return real("127.0.0.1", port, socket.AF_INET, type, proto, flags)
        return real(host, port, family, type, proto, flags)

    socket.getaddrinfo = getaddrinfo
    try:
        yield
    finally:
        socket.getaddrinfo = real
