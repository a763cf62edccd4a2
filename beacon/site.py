"""What one check knows about a site: the fetch plan, and the parsed documents the checks read.

The plan fetches in waves so that independent requests go out in parallel: first every URL known
from the address alone, then the ones the first answers point to (the sitemap named in robots.txt,
the OpenAPI document named by a Link header or the api-catalog, the MCP server card's endpoint...),
then the MCP probe. Every request goes through the check's `Fetcher`, which caps their number.
"""

import re
from dataclasses import dataclass, field
from functools import cached_property
from urllib.parse import quote, urlsplit

import lxml.html
from django.conf import settings
from requests.utils import parse_header_links

from . import constants
from .fetcher import Fetched, Fetcher, absolute, origin_of, same_site

HTML_ACCEPT = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8"
MARKDOWN_ACCEPT = "text/markdown, text/plain;q=0.5"
JSON_ACCEPT = "application/json, */*;q=0.5"
MCP_CARD_ACCEPT = "application/mcp-server-card+json, application/json;q=0.9"


@dataclass
class Result:
    """A check's verdict, what it saw, and what to change."""

    status: str
    summary: str
    evidence: list[dict] = field(default_factory=list)
    fix: dict | None = None  # {"text": ..., "snippet": ...}
    details: dict = field(default_factory=dict)


def fix(text: str, snippet: str = "") -> dict:
    return {"text": text, "snippet": snippet}


class Site:
    """The target: its URLs, and each document fetched once through the fetcher."""

    def __init__(self, url: str, fetcher: Fetcher):
        self.url = url
        self.origin = origin_of(url)
        self.host = urlsplit(url).hostname or ""
        self.fetcher = fetcher

    def at(self, path: str) -> str:
        return self.origin + path

    # Fetch plan -------------------------------------------------------------------------------

    def first_wave(self) -> list[tuple[str, dict]]:
        jobs = [
            (self.url, {"accept": HTML_ACCEPT, "max_bytes": constants.MAX_HTML_BYTES, "truncate": True}),
            (self.at("/robots.txt"), {"accept": "text/plain", "max_bytes": constants.MAX_TEXT_BYTES, "truncate": True}),
            (self.at("/llms.txt"), {"accept": "text/markdown, text/plain", "max_bytes": constants.MAX_TEXT_BYTES, "truncate": True}),
            (self.at("/llms-full.txt"), {"method": "HEAD", "accept": "text/markdown, text/plain"}),
            (self.url, {"accept": MARKDOWN_ACCEPT, "max_bytes": constants.MAX_HTML_BYTES, "truncate": True}),
            (self.at("/.well-known/agent-card.json"), {"accept": JSON_ACCEPT}),
            (self.at("/.well-known/api-catalog"), {"accept": "application/linkset+json, application/json;q=0.9"}),
            (self.at("/.well-known/ai-catalog.json"), {"accept": "application/ai-catalog+json, application/json;q=0.9"}),
            (self.at("/.well-known/mcp/server-card.json"), {"accept": MCP_CARD_ACCEPT}),
        ]
        if self.registry_url:
            jobs.append((self.registry_url, {"accept": "application/json"}))
        return jobs

    def run_plan(self) -> None:
        """Fetch everything the checks read, in waves; the checks then read from memory."""
        self.fetcher.fetch_many(self.first_wave())
        second = []
        sitemap = self.sitemap_urls[0] if self.sitemap_urls else self.at("/sitemap.xml")
        second.append((sitemap, {"accept": "application/xml, text/xml", "max_bytes": constants.MAX_SITEMAP_BYTES, "truncate": True}))
        if not self.markdown_negotiated:
            second.append((self.markdown_candidate, {"accept": MARKDOWN_ACCEPT, "max_bytes": constants.MAX_HTML_BYTES, "truncate": True}))
        if not self.agent_card_response.ok:
            second.append((self.at("/.well-known/agent.json"), {"accept": JSON_ACCEPT}))
        for candidate in self.openapi_candidates[:2]:
            second.append((candidate, {"accept": "application/json, application/yaml;q=0.9, */*;q=0.5"}))
        second.append((self.at("/.well-known/ucp"), {"accept": JSON_ACCEPT}))
        second.append((self.at("/.well-known/acp.json"), {"accept": JSON_ACCEPT}))
        second.append((self.x402_candidate, {"accept": JSON_ACCEPT}))
        self.fetcher.fetch_many(second)
        if self.mcp_card is None:
            self.fetcher.fetch_many([(url, {"accept": MCP_CARD_ACCEPT}) for url in self.mcp_card_fallbacks()])

    def get(self, url: str, **options) -> Fetched:
        return self.fetcher.fetch(url, **options)

    # The page ---------------------------------------------------------------------------------

    @cached_property
    def page(self) -> Fetched:
        return self.get(self.url, accept=HTML_ACCEPT, max_bytes=constants.MAX_HTML_BYTES, truncate=True)

    @cached_property
    def doc(self):
        """The page parsed as HTML (lxml), or None when there is no HTML to parse."""
        if not self.page.ok or not self.page.body.strip():
            return None
        try:
            return lxml.html.document_fromstring(self.page.text)
        except (ValueError, lxml.etree.ParserError):
            return None

    @cached_property
    def links(self) -> list[dict]:
        """Link relations of the page: the HTTP Link header and HTML <link> elements, URLs absolute."""
        found = []
        base = self.page.final_url or self.url
        header = self.page.headers.get("Link") if self.page.answered else None
        if header:
            try:
                for link in parse_header_links(header):
                    if link.get("url"):
                        found.append({"rel": link.get("rel", "").lower(), "type": link.get("type", "").lower(),
                                      "url": absolute(base, link["url"]), "from": "header"})
            except (ValueError, IndexError):
                pass
        if self.doc is not None:
            for element in self.doc.iter("link"):
                href = element.get("href")
                if href:
                    found.append({"rel": (element.get("rel") or "").lower(), "type": (element.get("type") or "").lower(),
                                  "url": absolute(base, href), "from": "html"})
        return found

    def links_with(self, rel: str, type_: str | None = None) -> list[dict]:
        return [link for link in self.links if rel in link["rel"].split() and (type_ is None or link["type"] == type_)]

    @cached_property
    def structured(self) -> dict:
        """JSON-LD, microdata and OpenGraph of the page (extruct), plus the count of invalid JSON-LD blocks."""
        return _structured(self)

    @cached_property
    def visible_text(self) -> str:
        """The text a non-rendering agent gets: the HTML without scripts, styles, templates, SVG."""
        if self.doc is None:
            return ""
        from copy import deepcopy

        body = deepcopy(self.doc)
        for element in body.xpath("//script|//style|//noscript|//template|//svg|//head"):
            element.drop_tree()
        return " ".join(body.text_content().split())

    # robots.txt, sitemap, llms.txt ------------------------------------------------------------

    @cached_property
    def robots(self) -> Fetched:
        return self.get(self.at("/robots.txt"), accept="text/plain", max_bytes=constants.MAX_TEXT_BYTES, truncate=True)

    @cached_property
    def sitemap_urls(self) -> list[str]:
        if not self.robots.ok:
            return []
        return [absolute(self.origin, m.group(1)) for m in re.finditer(r"(?im)^\s*sitemap\s*:\s*(\S+)", self.robots.text)][:5]

    @cached_property
    def llms(self) -> Fetched:
        return self.get(self.at("/llms.txt"), accept="text/markdown, text/plain", max_bytes=constants.MAX_TEXT_BYTES, truncate=True)

    @cached_property
    def llms_links(self) -> list[str]:
        if not self.llms.ok or self.llms.text.lstrip().startswith("<"):
            return []
        return [absolute(self.at("/llms.txt"), m.group(1)) for m in re.finditer(r"\[[^\]]*\]\(([^)\s]+)\)", self.llms.text)]

    # Markdown ---------------------------------------------------------------------------------

    @cached_property
    def markdown_response(self) -> Fetched:
        return self.get(self.url, accept=MARKDOWN_ACCEPT, max_bytes=constants.MAX_HTML_BYTES, truncate=True)

    @property
    def markdown_negotiated(self) -> bool:
        return self.markdown_response.ok and self.markdown_response.content_type == "text/markdown"

    @cached_property
    def markdown_candidate(self) -> str:
        alternates = self.links_with("alternate", "text/markdown")
        if alternates:
            return alternates[0]["url"]
        path = urlsplit(self.url).path or "/"
        if path.endswith("/"):
            return self.at(path + "index.html.md")
        return self.at(path + ".md")

    # Cards ------------------------------------------------------------------------------------

    @cached_property
    def agent_card_response(self) -> Fetched:
        return self.get(self.at("/.well-known/agent-card.json"), accept=JSON_ACCEPT)

    @cached_property
    def api_catalog(self) -> Fetched:
        return self.get(self.at("/.well-known/api-catalog"), accept="application/linkset+json, application/json;q=0.9")

    @cached_property
    def openapi_candidates(self) -> list[str]:
        """Where the OpenAPI document may be, best evidence first (RFC 8631 link, RFC 9727 catalog, llms.txt, guesses)."""
        found: list[str] = [link["url"] for link in self.links_with("service-desc")]
        catalog = self.api_catalog.json() if self.api_catalog.ok else None
        if isinstance(catalog, dict) and isinstance(catalog.get("linkset"), list):
            for entry in catalog["linkset"]:
                if isinstance(entry, dict):
                    for link in entry.get("service-desc") or []:
                        if isinstance(link, dict) and isinstance(link.get("href"), str):
                            found.append(absolute(self.at("/.well-known/api-catalog"), link["href"]))
        found += [link for link in self.llms_links if re.search(r"(openapi|swagger)[^/]*\.(json|ya?ml)$|/openapi$", link)]
        found += [self.at("/openapi.json"), self.at("/api/v1/openapi.json")]
        unique: list[str] = []
        for url in found:
            if url not in unique and same_site(url, self.origin):
                unique.append(url)
        return unique

    @cached_property
    def ai_catalog(self) -> Fetched:
        return self.get(self.at("/.well-known/ai-catalog.json"), accept="application/ai-catalog+json, application/json;q=0.9")

    @cached_property
    def ai_catalog_card_urls(self) -> list[tuple[str, dict | None]]:
        data = self.ai_catalog.json() if self.ai_catalog.ok else None
        found = []
        if isinstance(data, dict) and isinstance(data.get("entries"), list):
            for entry in data["entries"]:
                if isinstance(entry, dict) and "mcp-server-card" in str(entry.get("type", "")):
                    if isinstance(entry.get("data"), dict):
                        found.append((self.at("/.well-known/ai-catalog.json"), entry["data"]))
                    elif isinstance(entry.get("url"), str):
                        found.append((absolute(self.at("/.well-known/ai-catalog.json"), entry["url"]), None))
        return found

    def mcp_card_fallbacks(self) -> list[str]:
        return [self.at("/.well-known/mcp.json"), self.at("/mcp/server-card")]

    @cached_property
    def mcp_card(self) -> tuple[str, dict, str] | None:
        """The first MCP server card found: (url, card, how it was found), or None."""
        for url, data in self.ai_catalog_card_urls:
            if data is not None:
                return url, data, "AI Catalog (inline)"
            response = self.get(url, accept=MCP_CARD_ACCEPT)
            if response.ok and isinstance(response.json(), dict):
                return response.final_url or url, response.json(), "AI Catalog"
        candidates = [(self.at("/.well-known/mcp/server-card.json"), "/.well-known/mcp/server-card.json")]
        candidates += [(url, urlsplit(url).path) for url in self.mcp_card_fallbacks()]
        for url, how in candidates:
            response = self.get(url, accept=MCP_CARD_ACCEPT)
            if response.ok and isinstance(response.json(), dict):
                return response.final_url or url, response.json(), how
        return None

    # The MCP Registry -------------------------------------------------------------------------

    @cached_property
    def reversed_domain(self) -> str:
        labels = self.host.lower().removeprefix("www.").split(".")
        return ".".join(reversed(labels))

    @cached_property
    def registry_url(self) -> str:
        base = settings.BEACON_MCP_REGISTRY_URL.rstrip("/")
        if not base:
            return ""
        return f"{base}/v0.1/servers?search={quote(self.reversed_domain)}&version=latest&limit=100"

    @cached_property
    def registry(self) -> Fetched | None:
        return self.get(self.registry_url, accept="application/json") if self.registry_url else None

    @cached_property
    def registry_entries(self) -> list[dict]:
        """Registry entries that belong to this site: namespace is the reversed domain, or a remote or website on it."""
        data = self.registry.json() if self.registry is not None and self.registry.ok else None
        if not isinstance(data, dict) or not isinstance(data.get("servers"), list):
            return []
        mine = []
        for item in data["servers"]:
            server = item.get("server") if isinstance(item, dict) else None
            if not isinstance(server, dict):
                continue
            name = str(server.get("name", ""))
            namespace = name.split("/")[0].lower()
            remotes = [r.get("url", "") for r in server.get("remotes") or [] if isinstance(r, dict)]
            on_site = namespace == self.reversed_domain or namespace.startswith(self.reversed_domain + ".")
            on_site = on_site or any(isinstance(u, str) and same_site(u, self.origin) for u in remotes)
            website = server.get("websiteUrl")
            on_site = on_site or (isinstance(website, str) and same_site(website, self.origin))
            if on_site:
                meta = (item.get("_meta") or {}).get("io.modelcontextprotocol.registry/official") or {}
                mine.append({"name": name, "remotes": [u for u in remotes if isinstance(u, str)],
                             "status": meta.get("status", "active") if isinstance(meta, dict) else "active"})
        return mine

    @cached_property
    def x402_candidate(self) -> str:
        """Where a 402 is likeliest: a paid route the site links (a URL naming x402), else the /.well-known/x402 manifest."""
        for url in self.llms_links + [link["url"] for link in self.links]:
            if "x402" in url.lower() and same_site(url, self.origin):
                return url
        return self.at("/.well-known/x402")

    # Payments ---------------------------------------------------------------------------------

    def payment_required_answers(self) -> list[Fetched]:
        """Every answer so far with HTTP 402 (x402 and similar)."""
        return [entry for entry in self.fetcher.answers() if entry.status == 402]


def _structured(site: Site) -> dict:
    """JSON-LD, microdata and OpenGraph of the page, by extruct (no fetching: contexts are never loaded)."""
    import json

    import extruct

    if site.doc is None:
        return {}
    invalid = 0
    for script in site.doc.xpath('//script[@type="application/ld+json"]'):
        try:
            json.loads(script.text_content())
        except (ValueError, RecursionError):
            invalid += 1
    try:
        data = extruct.extract(site.page.text, base_url=site.page.final_url or site.url,
                               syntaxes=["json-ld", "microdata", "opengraph"], uniform=True, errors="ignore")
    except Exception:  # noqa: BLE001 - a parser failure on hostile HTML means no structured data, not a crash
        data = {}
    data["invalid_json_ld"] = invalid
    return data
