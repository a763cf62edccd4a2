"""Can an agent discover the product and its surfaces: robots.txt, sitemap, llms.txt, the MCP Registry."""

import re
from urllib.parse import urlsplit

from defusedxml import ElementTree
from defusedxml.common import DefusedXmlException
from protego import Protego

from ..constants import AI_AGENT_TOKENS, ERROR, FAIL, NOT_APPLICABLE, PARTIAL, PASS
from ..site import Result, Site, fix

ROBOTS_FIX = """User-agent: *
Allow: /

# Search and user-triggered AI agents may read the site; training crawlers are your choice.
User-agent: OAI-SearchBot
User-agent: ChatGPT-User
User-agent: Claude-SearchBot
User-agent: Claude-User
User-agent: PerplexityBot
User-agent: Perplexity-User
Allow: /

Sitemap: {origin}/sitemap.xml"""


def robots_ai_access(site: Site) -> Result:
    robots = site.robots
    path = urlsplit(site.url).path or "/"
    if robots.error:
        return Result(ERROR, f"robots.txt could not be fetched: {robots.error}", [robots.evidence()])
    if 400 <= robots.status < 500:
        return Result(PASS, "There is no robots.txt, so every agent may fetch the site.", [robots.evidence(excerpt=False)],
                      details={"allowed": {group: list(tokens) for group, tokens in AI_AGENT_TOKENS.items()}, "blocked": {}})
    if not robots.ok:
        return Result(FAIL, f"robots.txt answers {robots.status}; agents treat that as: nothing may be fetched.",
                      [robots.evidence()], fix("Serve robots.txt with status 200 (or 404 to allow everything).",
                                               ROBOTS_FIX.format(origin=site.origin)))
    parser = Protego.parse(robots.text)
    allowed: dict[str, list[str]] = {}
    blocked: dict[str, list[str]] = {}
    for group, tokens in AI_AGENT_TOKENS.items():
        for token in tokens:
            (allowed if parser.can_fetch(site.url, token) else blocked).setdefault(group, []).append(token)
    signals = re.findall(r"(?im)^\s*(content-signal|content-usage)\s*:\s*(.+)$", robots.text)
    details = {"allowed": allowed, "blocked": blocked, "content_signals": [f"{k}: {v.strip()}" for k, v in signals][:5]}
    reading = [t for g in ("user_fetch", "search") for t in AI_AGENT_TOKENS[g]]
    reading_blocked = [t for g in ("user_fetch", "search") for t in blocked.get(g, [])]
    evidence = [robots.evidence(f"Judged for {path} by product token.")]
    if not reading_blocked:
        note = " Training crawlers are blocked, which is a fair choice." if blocked.get("training") else ""
        return Result(PASS, f"Search and user-triggered AI agents may fetch {path}.{note}", evidence, details=details)
    snippet = ROBOTS_FIX.format(origin=site.origin)
    if len(reading_blocked) < len(reading):
        return Result(PARTIAL, f"Some AI agents are blocked from {path}: {', '.join(reading_blocked)}.", evidence,
                      fix("Allow the search and user-triggered AI agents in robots.txt.", snippet), details)
    return Result(FAIL, f"robots.txt blocks every search and user-triggered AI agent from {path}.", evidence,
                  fix("Allow the search and user-triggered AI agents in robots.txt.", snippet), details)


SITEMAP_NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"


def sitemap(site: Site) -> Result:
    listed = bool(site.sitemap_urls)
    url = site.sitemap_urls[0] if listed else site.at("/sitemap.xml")
    response = site.get(url, accept="application/xml, text/xml", max_bytes=10_000_000, truncate=True)
    skeleton = (f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
                f"  <url><loc>{site.origin}/</loc></url>\n</urlset>")
    if response.error:
        return Result(ERROR, f"The sitemap could not be fetched: {response.error}", [response.evidence()])
    if not response.ok:
        return Result(FAIL, "No sitemap was found (robots.txt names none and /sitemap.xml is missing).",
                      [response.evidence(excerpt=False)],
                      fix("Publish /sitemap.xml and name it in robots.txt.", skeleton + f"\n\n# robots.txt\nSitemap: {site.origin}/sitemap.xml"))
    try:
        root = ElementTree.fromstring(response.body)
    except (ElementTree.ParseError, DefusedXmlException, ValueError):
        return Result(PARTIAL, "A sitemap answers but is not valid XML.", [response.evidence()],
                      fix("Make the sitemap valid sitemap XML.", skeleton))
    kind = root.tag.replace(SITEMAP_NS, "")
    locs = [(el.text or "").strip() for el in root.iter(f"{SITEMAP_NS}loc")]
    on_site = [loc for loc in locs if loc and urlsplit(loc).hostname and (urlsplit(loc).hostname or "").lower().removeprefix("www.") == site.host.lower().removeprefix("www.")]
    details = {"kind": kind, "urls": len(locs), "on_site": len(on_site), "listed_in_robots": listed}
    evidence = [response.evidence(f"{kind} with {len(locs)} URLs, {len(on_site)} on the site.", excerpt=False)]
    if kind not in ("urlset", "sitemapindex") or not on_site:
        return Result(PARTIAL, "The sitemap lists no URL on the site.", evidence, fix("List the site's pages in the sitemap.", skeleton), details)
    if not listed:
        return Result(PARTIAL, "There is a sitemap, but robots.txt does not name it.", evidence,
                      fix("Name the sitemap in robots.txt.", f"Sitemap: {url}"), details)
    return Result(PASS, f"The sitemap named in robots.txt lists {len(on_site)} URLs on the site.", evidence, details=details)


LLMS_SKELETON = """# {name}

> One or two sentences: what {name} does and for whom.

What an agent needs first: how to get a key, the base URL, limits.

## Docs

- [Quickstart]({origin}/docs/quickstart.md): the first call, step by step
- [API reference]({origin}/openapi.json): OpenAPI description

## Optional

- [Pricing]({origin}/pricing.md)"""


def llms_txt(site: Site) -> Result:
    response = site.llms
    name = site.host.removeprefix("www.")
    skeleton = LLMS_SKELETON.format(name=name, origin=site.origin)
    if response.error:
        return Result(ERROR, f"llms.txt could not be fetched: {response.error}", [response.evidence()])
    text = response.text
    is_html = response.content_type in ("text/html", "application/xhtml+xml") or text.lstrip()[:15].lower().startswith(("<!doctype", "<html"))
    if not response.ok or is_html:
        note = "The answer is an HTML page, not Markdown." if response.ok else ""
        return Result(FAIL, "There is no llms.txt." if not response.ok else "/llms.txt answers with HTML, not Markdown.",
                      [response.evidence(note, excerpt=response.ok)], fix("Publish /llms.txt (Markdown, text/plain or text/markdown).", skeleton))
    h1 = re.findall(r"(?m)^# +(\S.*)$", text)
    summary = re.search(r"(?m)^> *(\S.*)$", text)
    sections = re.findall(r"(?m)^## +(\S.*)$", text)
    links = site.llms_links
    full = site.get(site.at("/llms-full.txt"), method="HEAD", accept="text/markdown, text/plain")
    details = {"title": h1[0].strip() if h1 else None, "summary": summary.group(1).strip() if summary else None,
               "sections": sections[:20], "links": len(links), "llms_full_txt": bool(full.ok)}
    evidence = [response.evidence()]
    if full.answered:
        evidence.append(full.evidence("llms-full.txt present." if full.ok else "No llms-full.txt (optional).", excerpt=False))
    missing = []
    if len(h1) != 1:
        missing.append("exactly one # title")
    if not summary:
        missing.append("a > summary line")
    if not sections or not links:
        missing.append("a ## section with links")
    if not missing:
        return Result(PASS, f"llms.txt has a title, a summary and {len(links)} links in {len(sections)} sections.", evidence, details=details)
    return Result(PARTIAL, "llms.txt lacks " + ", ".join(missing) + ".", evidence,
                  fix("Follow the llms.txt layout: # title, > summary, ## sections of [name](url) links.", skeleton), details)


def mcp_registry(site: Site, *, has_mcp: bool) -> Result:
    registry = site.registry
    server_json = ('{\n  "$schema": "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",\n'
                   f'  "name": "{site.reversed_domain}/server",\n  "description": "What the server does, in one line.",\n'
                   f'  "version": "1.0.0",\n  "remotes": [{{"type": "streamable-http", "url": "{site.origin}/mcp"}}]\n}}')
    if registry is None:
        return Result(NOT_APPLICABLE, "The MCP Registry lookup is not configured on this service.")
    if registry.error or not registry.ok or not isinstance(registry.json(), dict):
        reason = registry.error or f"it answered {registry.status}"
        return Result(ERROR, f"The MCP Registry could not be searched: {reason}", [registry.evidence(excerpt=False)])
    entries = site.registry_entries
    evidence = [registry.evidence(f"Searched for {site.reversed_domain}.", excerpt=False)]
    active = [e for e in entries if e["status"] not in ("deleted", "deprecated")]
    if active:
        names = ", ".join(e["name"] for e in active[:3])
        return Result(PASS, f"Listed in the MCP Registry as {names}.", evidence, details={"entries": entries})
    if any(e["status"] == "deprecated" for e in entries):
        return Result(PARTIAL, "The site's MCP Registry entry is deprecated.", evidence,
                      fix("Publish a current version of the server to the MCP Registry.", server_json), {"entries": entries})
    if not has_mcp:
        return Result(NOT_APPLICABLE, "The site has no MCP server to list.", evidence)
    return Result(FAIL, "The site's MCP server is not listed in the MCP Registry.", evidence,
                  fix("Publish server.json to the MCP Registry (mcp-publisher), in the namespace of your domain.", server_json))
