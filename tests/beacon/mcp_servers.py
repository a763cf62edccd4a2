"""Real MCP servers on loopback, built with the mcp SDK (2.x), for Beacon's probe.

- `legacy`: the SDK as it is; it answers the `initialize` handshake (and also the 2026 calls).
- `modern`: the same SDK server behind a gate that refuses the legacy handshake the way a server of
  the 2026-07-28 revision only does (HTTP 400, JSON-RPC -32022 naming the versions it supports), so
  the probe must use `server/discover` and the 2026 headers; those reach the SDK untouched.
Both record every JSON-RPC method they receive, so a test can prove no tool was ever called.
"""

import asyncio
import json
import socket
import threading
import time

import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings


def _app(calls: list):
    server = MCPServer(name="lumen-notes", version="1.2.0")

    @server.tool(description="Make notes from a recording URL.")
    def make_notes(url: str) -> str:
        calls.append("TOOL CALLED")
        return "notes"

    return server.streamable_http_app(streamable_http_path="/mcp", stateless_http=True, json_response=True,
                                      transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))


class _Recorder:
    def __init__(self, app, methods: list, *, modern_only: bool):
        self.app, self.methods, self.modern_only = app, methods, modern_only

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["method"] != "POST":
            return await self.app(scope, receive, send)
        chunks, more = [], True
        while more:
            message = await receive()
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = b"".join(chunks)
        try:
            method = json.loads(body).get("method")
        except (ValueError, AttributeError):
            method = None
        self.methods.append(method)
        if self.modern_only and method == "initialize":
            error = {"jsonrpc": "2.0", "id": json.loads(body).get("id"), "error": {
                "code": -32022, "message": "Unsupported protocol version", "data": {"supported": ["2026-07-28"]}}}
            data = json.dumps(error).encode()
            await send({"type": "http.response.start", "status": 400, "headers": [(b"content-type", b"application/json"),
                                                                                   (b"content-length", str(len(data)).encode())]})
            await send({"type": "http.response.body", "body": data})
            return None
        sent = False

        async def replay():
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        return await self.app(scope, replay, send)


class McpServer:
    """An SDK MCP server on 127.0.0.1 in a thread; `methods` lists the JSON-RPC methods it received."""

    def __init__(self, *, modern_only: bool = False):
        self.methods: list = []
        self.tool_calls: list = []
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        sock.close()
        app = _Recorder(_app(self.tool_calls), self.methods, modern_only=modern_only)
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning", lifespan="on"))
        self.thread = threading.Thread(target=lambda: asyncio.run(self.server.serve()), daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started and time.monotonic() < deadline:
            time.sleep(0.02)

    def stop(self):
        self.server.should_exit = True
        self.thread.join(timeout=5)
