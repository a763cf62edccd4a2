"""The local server: tools/list and tools/call are forwarded to `$SVC_BASE_URL/mcp` with `$SVC_API_KEY`.

The tool list is the hosted server's, so the package never falls behind the service; a tool error
comes back as the service sent it (the REST message).
"""

import contextlib
import os
from collections.abc import AsyncIterator

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from svc_mcp import __version__

DEFAULT_BASE_URL = "http://127.0.0.1:8000"


def settings() -> tuple[str, str | None, float]:
    base_url = (os.environ.get("SVC_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
    key = os.environ.get("SVC_API_KEY") or None
    timeout = float(os.environ.get("SVC_TIMEOUT_SECONDS") or 60)
    return base_url, key, timeout


def remote_client(base_url: str, key: str | None, timeout: float) -> Client:
    headers = {"User-Agent": f"svc-mcp/{__version__}"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    http = httpx2.AsyncClient(headers=headers, timeout=timeout)
    return Client(streamable_http_client(f"{base_url}/mcp", http_client=http))


@contextlib.asynccontextmanager
async def lifespan(_server: Server) -> AsyncIterator[dict]:
    async with remote_client(*settings()) as remote:
        yield {"remote": remote}


async def list_tools(ctx, params) -> types.ListToolsResult:
    listed = await ctx.lifespan_context["remote"].list_tools()
    return types.ListToolsResult(tools=listed.tools)


async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
    return await ctx.lifespan_context["remote"].call_tool(params.name, params.arguments or {})


def server_create() -> Server:
    return Server(
        "svc",
        version=__version__,
        title="Agent Guardrails, Registry, Reachability and Clearance Service",
        description="The service's REST operations as tools, forwarded to the hosted MCP server with your key.",
        instructions=("Each tool is one route of the service's REST API. Your key comes from SVC_API_KEY; without one, "
                      "only keyless tools work. Get a key with the signup_create tool and an empty argument object."),
        lifespan=lifespan,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def serve() -> None:
    server = server_create()
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def main() -> None:
    anyio.run(serve)


if __name__ == "__main__":
    main()
