"""Builders of local test sites: each returns routes for beacon.sample_site.LocalSite given the site's origin."""

import base64
import json

from beacon.sample_site import Page, mcp_responder, sample_routes

LONG_TEXT = " ".join(["Lumen Notes turns meeting recordings into notes, decisions and action items for teams and agents."] * 20)


def html(*, title="Lumen Notes — meeting audio to notes", description="Lumen Notes is an API that turns meeting recordings into searchable notes and action items.",
         body=None, head="") -> str:
    body = body if body is not None else f"<main><h1>Lumen Notes</h1><p>{LONG_TEXT}</p></main>"
    meta = f'<meta name="description" content="{description}">' if description else ""
    return f"<!doctype html><html lang='en'><head><title>{title}</title>{meta}{head}</head><body>{body}</body></html>"


def good(origin: str) -> dict:
    """Made to pass every check (the sample site, with its MCP endpoint)."""
    routes = sample_routes(origin, registry=False)
    routes["/mcp"] = mcp_responder()
    return routes


def bare(origin: str) -> dict:
    """A home page and nothing else: fails most checks."""
    return {"/": Page(html(title="Home", description="", body="<p>Welcome.</p>"))}


def with_page(body_html: str, **extra) -> callable:
    def build(origin: str) -> dict:
        return {"/": Page(body_html), **extra}
    return build


def x402_header(origin: str) -> dict:
    requirements = {"x402Version": 2, "error": "Payment required", "resource": {"url": f"{origin}/api/x402/notes"},
                    "accepts": [{"scheme": "exact", "network": "eip155:8453", "amount": "1000", "asset": "USDC", "payTo": "0x0"}]}
    return {"PAYMENT-REQUIRED": base64.b64encode(json.dumps(requirements).encode()).decode()}


def j(data, status=200, content_type="application/json", **headers) -> Page:
    return Page(json.dumps(data), status=status, content_type=content_type, headers=headers)
