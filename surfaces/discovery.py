"""Where agents find the surfaces: the MCP server card, the AI catalog, the RFC 9727 API catalog, Link headers,
robots.txt and the sitemap, the home page in Markdown (llms.txt); and the gate that refuses a bad or revoked
key on /mcp and /a2a before either protocol reads the body."""

from xml.sax.saxutils import escape

import anyio
from django.conf import settings
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from core.errors import ApiError
from surfaces import auth, operations
from surfaces.mcp_server import DESCRIPTION, NAME, TITLE

SERVER_CARD_SCHEMA = "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json"
SERVER_CARD_PATHS = ("/mcp/server-card", "/.well-known/mcp/server-card.json", "/.well-known/mcp.json")
PROTOCOL_VERSIONS = ["2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]
PACKAGE = "svc-mcp"
CORS = {"Access-Control-Allow-Origin": "*"}
CACHE = {"Cache-Control": "public, max-age=3600"}

LINKS = (
    '</api/v1/openapi.json>; rel="service-desc"; type="application/vnd.oai.openapi+json", '
    '</docs>; rel="service-doc"; type="text/html", '
    '</llms.txt>; rel="describedby"; type="text/plain", '
    '</.well-known/api-catalog>; rel="api-catalog", '
    '</index.md>; rel="alternate"; type="text/markdown"'
)
SITEMAP_PATHS = ("/", "/docs", "/docs/redoc", "/llms.txt", "/api/v1/preflight/record")


def _host() -> str:
    return settings.BASE_URL.split("://", 1)[-1].split("/", 1)[0].split(":", 1)[0]


def registry_name() -> str:
    """The MCP Registry name: the reversed domain of BASE_URL, then the server's name."""
    return ".".join(reversed(_host().split("."))) + f"/{NAME}"


def server_card() -> dict:
    base = settings.BASE_URL
    return {
        "$schema": SERVER_CARD_SCHEMA,
        "name": registry_name(),
        "title": TITLE,
        "description": DESCRIPTION[:100],
        "version": settings.SERVICE_VERSION,
        "websiteUrl": base,
        "remotes": [{
            "type": "streamable-http",
            "url": f"{base}/mcp",
            "supportedProtocolVersions": PROTOCOL_VERSIONS,
            "headers": [{"name": "Authorization", "description": "Bearer svc_live_… (optional: keyless routes work without it).",
                         "isRequired": False, "isSecret": True}],
        }],
        "packages": [{
            "registryType": "pypi", "registryBaseUrl": "https://pypi.org", "identifier": PACKAGE,
            "version": settings.SERVICE_VERSION, "transport": {"type": "stdio"},
            "environmentVariables": [
                {"name": "SVC_API_KEY", "description": "Your key, svc_live_…", "isRequired": False, "isSecret": True},
                {"name": "SVC_BASE_URL", "description": "The service's address.", "default": base, "isRequired": False},
            ],
        }],
    }


def ai_catalog() -> dict:
    base = settings.BASE_URL
    return {
        "specVersion": "1.0",
        "entries": [
            {"identifier": f"urn:air:{_host()}:mcp:{NAME}", "type": "application/mcp-server-card+json",
             "title": TITLE, "url": f"{base}/mcp/server-card", "data": server_card()},
            {"identifier": f"urn:air:{_host()}:a2a:{NAME}", "type": "application/a2a-agent-card+json",
             "title": TITLE, "url": f"{base}/.well-known/agent-card.json"},
            {"identifier": f"urn:air:{_host()}:openapi:{NAME}", "type": "application/vnd.oai.openapi+json",
             "title": TITLE, "url": f"{base}/api/v1/openapi.json"},
        ],
    }


def api_catalog() -> dict:
    """RFC 9727: one linkset entry for the API, pointing at its OpenAPI description and human docs."""
    base = settings.BASE_URL
    return {"linkset": [{
        "anchor": f"{base}/api/v1",
        "service-desc": [{"href": f"{base}/api/v1/openapi.json", "type": "application/vnd.oai.openapi+json"},
                         {"href": f"{base}/api/v1/openapi.yaml", "type": "application/vnd.oai.openapi"}],
        "service-doc": [{"href": f"{base}/docs", "type": "text/html"}, {"href": f"{base}/llms.txt", "type": "text/plain"}],
        "service-meta": [{"href": f"{base}/mcp/server-card", "type": "application/mcp-server-card+json"},
                         {"href": f"{base}/.well-known/agent-card.json", "type": "application/json"}],
        "status": [{"href": f"{base}/api/v1/health", "type": "application/json"}],
    }]}


async def server_card_view(request: Request) -> Response:
    return JSONResponse(server_card(), media_type="application/mcp-server-card+json", headers={**CORS, **CACHE})


async def ai_catalog_view(request: Request) -> Response:
    return JSONResponse(ai_catalog(), media_type="application/ai-catalog+json", headers={**CORS, **CACHE})


async def api_catalog_view(request: Request) -> Response:
    headers = {**CORS, **CACHE, "Link": f'<{settings.BASE_URL}/.well-known/api-catalog>; rel="api-catalog"'}
    if request.method == "HEAD":
        return Response(status_code=200, media_type="application/linkset+json", headers=headers)
    return JSONResponse(api_catalog(), media_type="application/linkset+json", headers=headers)


async def robots_txt_view(request: Request) -> Response:
    body = (f"User-agent: *\nAllow: /\nDisallow: /admin/\n\nSitemap: {settings.BASE_URL}/sitemap.xml\n")
    return PlainTextResponse(body, headers=CACHE)


async def sitemap_xml_view(request: Request) -> Response:
    urls = "".join(f"  <url><loc>{escape(settings.BASE_URL + path)}</loc></url>\n" for path in SITEMAP_PATHS)
    body = f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n{urls}</urlset>\n'
    return Response(body, media_type="application/xml", headers=CACHE)


def discovery_routes() -> list[Route]:
    return [
        Route("/robots.txt", robots_txt_view, methods=["GET"]),
        Route("/sitemap.xml", sitemap_xml_view, methods=["GET"]),
        *[Route(path, server_card_view, methods=["GET"]) for path in SERVER_CARD_PATHS],
        Route("/.well-known/ai-catalog.json", ai_catalog_view, methods=["GET"]),
        Route("/.well-known/api-catalog", api_catalog_view, methods=["GET", "HEAD"]),
    ]


# ASGI middleware.

GATED_PATHS = ("/mcp", "/a2a")
MARKDOWN_PATHS = ("/index.md", "/index.html.md")


def _wants_markdown(accept: str | None) -> bool:
    """True when text/markdown is asked for and not ranked below text/html."""
    if not accept:
        return False
    ranks = {}
    for item in accept.split(","):
        kind, *params = [part.strip() for part in item.split(";")]
        q = 1.0
        for param in params:
            if param.startswith("q="):
                try:
                    q = float(param[2:])
                except ValueError:
                    q = 0.0
        ranks[kind.lower()] = q
    return ranks.get("text/markdown", 0) > 0 and ranks.get("text/markdown", 0) >= ranks.get("text/html", 0)


def _header(scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return value.decode("latin-1")
    return None


class SurfaceMiddleware:
    """Refuses a bad, unknown or revoked key on POST /mcp and /a2a with the REST 401 (no header: keyless), and
    adds the discovery Link header to every other HTTP response."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        path = scope.get("path", "")
        if path in GATED_PATHS:
            authorization = _header(scope, b"authorization")
            if authorization is not None:
                refusal = await anyio.to_thread.run_sync(self._refusal, authorization, scope)
                if refusal is not None:
                    return await refusal(scope, receive, send)
            return await self.app(scope, receive, send)

        markdown = path in MARKDOWN_PATHS or (path == "/" and _wants_markdown(_header(scope, b"accept")))
        if markdown:  # the home page in Markdown is llms.txt, rendered by Django
            scope = {**scope, "path": "/llms.txt", "raw_path": b"/llms.txt"}

        async def send_with_links(message):
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                if not any(key.lower() == b"link" for key, _ in headers):
                    headers.append((b"link", LINKS.encode()))
                if path == "/":
                    headers.append((b"vary", b"Accept"))
                if markdown and message.get("status") == 200:
                    headers = [(k, v) for k, v in headers if k.lower() != b"content-type"]
                    headers.append((b"content-type", b"text/markdown; charset=utf-8"))
                message = {**message, "headers": headers}
            await send(message)

        return await self.app(scope, receive, send_with_links)

    @staticmethod
    def _refusal(authorization: str, scope) -> Response | None:
        from django.db import close_old_connections

        client = scope.get("client")
        caller = operations.Caller(client_address=client[0] if client else "unknown",
                                   forwarded_for=_header(scope, b"x-forwarded-for"))
        close_old_connections()
        try:
            auth.principal_from_authorization(authorization, meta=caller.meta(), path=scope.get("path", ""))
        except ApiError as exc:
            return JSONResponse({"error": exc.message}, status_code=exc.status,
                                headers={"WWW-Authenticate": 'Bearer realm="api"'})
        finally:
            close_old_connections()
        return None
