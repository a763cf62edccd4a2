"""MCP at /mcp: streamable HTTP, stateless, JSON responses; the legacy handshake and 2026-07-28 both served.

Every tool is a REST operation (surfaces.operations). The caller's Authorization header, read per call,
is the REST key: keyless where the route is keyless, with the same limits; a route's error comes back
as a tool error (`isError`) whose text is the REST message.
"""

import json

import anyio
import mcp_types as types
from django.conf import settings
from mcp.server.lowlevel import Server
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError

from surfaces import operations

NAME = "svc"
TITLE = "Agent Guardrails, Registry, Reachability and Clearance Service"
DESCRIPTION = "Guardrails, Atlas, Beacon, Tower and Preflight: the service's REST operations as tools."
INSTRUCTIONS = (
    "Each tool is one route of the REST API (its description names it) and takes that route's path, query and "
    "body fields as arguments. Send your key as `Authorization: Bearer svc_live_…` (Tower agent routes: "
    "`svc_agent_…`); without a key, only keyless routes work, with the keyless limits. Get a key with the "
    "`signup_create` tool and an empty argument object. Errors are tool errors with the REST message."
)
META_KEY = "io.svc/http"


def _tool(op: operations.Operation) -> types.Tool:
    return types.Tool(
        name=op.name,
        title=op.operation_id.replace("_", " "),
        description=op.description,
        input_schema=operations.input_schema_copy(op),
        annotations=types.ToolAnnotations(**op.annotations),
    )


async def list_tools(ctx, params) -> types.ListToolsResult:
    ops = await anyio.to_thread.run_sync(operations.operations)
    return types.ListToolsResult(tools=[_tool(op) for op in ops])


def tool_result(outcome: operations.Outcome) -> types.CallToolResult:
    """The route's answer as a tool result: JSON as structured content, text as text, errors flagged."""
    meta = {META_KEY: {"status": outcome.status, "headers": operations.passed_headers(outcome)}}
    if outcome.is_error:
        structured = outcome.body if isinstance(outcome.body, dict) else {"error": outcome.message}
        structured = {**structured, "status": outcome.status}
        return types.CallToolResult(content=[types.TextContent(text=outcome.message)], structured_content=structured,
                                    is_error=True, _meta=meta)
    if isinstance(outcome.body, (dict, list)):
        text = json.dumps(outcome.body, indent=2, ensure_ascii=False)
        structured = outcome.body if isinstance(outcome.body, dict) else {"items": outcome.body}
        return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=structured, _meta=meta)
    return types.CallToolResult(content=[types.TextContent(text=str(outcome.body))], _meta=meta)


async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
    op = await anyio.to_thread.run_sync(operations.operation, params.name)
    if op is None:
        raise MCPError(types.INVALID_PARAMS, f"No tool is named {params.name!r}; tools/list names them.")
    request = ctx.request
    caller = operations.Caller()
    if request is not None:
        caller = operations.Caller.from_headers(request.headers, request.client.host if request.client else None,
                                                request.url.scheme)
    try:
        outcome = await anyio.to_thread.run_sync(operations.operation_call, op, params.arguments or {}, caller)
    except operations.ArgumentError as exc:
        outcome = operations.Outcome(status=400, content_type="application/json", body={"error": str(exc)}, headers={})
    return tool_result(outcome)


def server_create() -> Server:
    return Server(
        NAME,
        version=settings.SERVICE_VERSION,
        title=TITLE,
        description=DESCRIPTION,
        instructions=INSTRUCTIONS,
        website_url=settings.BASE_URL,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        get_tool_input_schema=lambda name: (op := operations.operation(name)) and op.input_schema,
    )


def _hosts() -> tuple[list[str], list[str]]:
    """Hosts and origins the DNS-rebinding guard accepts: Django's ALLOWED_HOSTS and the BASE_URL's."""
    hosts, origins = [], []
    for host in [*settings.ALLOWED_HOSTS, settings.BASE_URL.split("://", 1)[-1].split("/", 1)[0]]:
        if host == "*":
            return ["*"], ["*"]
        bare = host.lstrip(".")
        hosts += [bare, f"{bare}:*"]
        origins += [f"https://{bare}", f"http://{bare}", f"https://{bare}:*", f"http://{bare}:*"]
    return hosts, origins


def transport_security() -> TransportSecuritySettings:
    hosts, origins = _hosts()
    if hosts == ["*"]:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins)


def mcp_app(server: Server):
    """The Starlette sub-app; its routes are spliced into the outer router (no Mount: no /mcp -> /mcp/ redirect)."""
    return server.streamable_http_app(streamable_http_path="/mcp", stateless_http=True, json_response=True,
                                      transport_security=transport_security())
