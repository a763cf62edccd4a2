"""The one ASGI application: a Starlette router that owns the lifespan, in front of Django.

    /mcp                                  MCP, streamable HTTP (stateless, JSON responses; both protocol eras)
    /mcp/server-card, /.well-known/mcp/server-card.json, /.well-known/mcp.json    the MCP server card
    /.well-known/ai-catalog.json          AI catalog listing the cards
    /.well-known/api-catalog              RFC 9727 API catalog (linkset)
    /.well-known/agent-card.json, /a2a    A2A agent card and JSON-RPC (1.0 SendMessage, 0.3 message/send)
    everything else                       Django (the REST API, /docs, /llms.txt, pages)
"""

import contextlib
import logging

import anyio
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import Mount

from surfaces import operations
from surfaces.a2a_agent import a2a_routes
from surfaces.discovery import SurfaceMiddleware, discovery_routes
from surfaces.mcp_server import mcp_app, server_create

log = logging.getLogger(__name__)


def application_create(django_app) -> Starlette:
    """A fresh application (each owns its MCP session manager, which runs once per instance)."""
    server = server_create()
    mcp = mcp_app(server)

    @contextlib.asynccontextmanager
    async def lifespan(_app):
        # Django's ASGI handler refuses lifespan scopes, so this router owns it and runs the MCP session manager.
        async with server.session_manager.run():
            # Build the tool list (the OpenAPI schema) once now, not on the first client's request. A schema that
            # cannot be built must not take the REST API down with it: tools/list will report the error.
            try:
                await anyio.to_thread.run_sync(operations.operations)
            except Exception:  # noqa: BLE001
                log.exception("the MCP tool list could not be built from the OpenAPI schema")
            yield

    return Starlette(
        routes=[*mcp.routes, *discovery_routes(), *a2a_routes(), Mount("/", app=django_app)],
        middleware=[Middleware(SurfaceMiddleware)],
        lifespan=lifespan,
    )
