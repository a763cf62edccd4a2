"""The other surfaces of the same operations: MCP at /mcp, A2A at /a2a, discovery documents.

Thin maps onto the products' routes: a tool or a skill is one REST operation, run in-process
through Django with the caller's own Authorization header, so keys, scopes, limits, validation,
errors and the service function are the REST route's own. Nothing imports this package except
config/asgi.py.
"""
