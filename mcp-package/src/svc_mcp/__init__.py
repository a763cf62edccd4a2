"""A stdio MCP server that forwards every tool to the hosted service's /mcp with the user's key."""

__version__ = "0.21.0"
