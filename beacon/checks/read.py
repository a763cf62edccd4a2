"""Can an agent read what the product is: served, readable without JavaScript, titled, structured, in Markdown."""

import re

from ..constants import ERROR, FAIL, PARTIAL, PASS
from ..site import Result, Site, fix

CHALLENGE_HEADERS = (
    ("cf-mitigated", "challenge", "Cloudflare challenge"),
    ("x-vercel-mitigated", "challenge", "Vercel challenge"),
    ("x-amzn-waf-action", "", "AWS WAF challenge"),
    ("x-datadome", "", "DataDome"),
)
CHALLENGE_BODIES = (
    ("just a moment...", "an interstitial challenge ('Just a moment…')"),
    ("checking your browser", "an interstitial challenge ('Checking your browser')"),
    ("captcha-delivery.com", "DataDome captcha"),
    ("_pxcaptcha", "PerimeterX captcha"),
    ("px-captcha", "PerimeterX captcha"),
    ("_incapsula_resource", "Imperva challenge"),
    ("please enable cookies", "a cookie wall"),
)


def served_to_agents(site: Site) -> Result:
    page = site.page
    wall_fix = fix("Let identified AI agents through the bot protection (allow-list the user agents or verified bots, "
                   "or serve them the page without a challenge).", "")
    if page.error:
        return Result(ERROR, f"The page could not be fetched: {page.error}", [page.evidence()])
    evidence = [page.evidence()]
    for header, value, name in CHALLENGE_HEADERS:
        got = (page.headers.get(header) or "").lower()
        if got and (not value or value in got):
            return Result(FAIL, f"The page answers an agent with a bot wall ({name}).", evidence, wall_fix)
    if page.status in (401, 403, 407, 429, 503) or not page.ok:
        return Result(FAIL, f"The page answers an AI agent with HTTP {page.status}.", evidence, wall_fix)
    lowered = page.text[:200_000].lower()
    for marker, name in CHALLENGE_BODIES:
        if marker in lowered and len(site.visible_text.split()) < 200:
            return Result(FAIL, f"The page answers an agent with {name}.", evidence, wall_fix)
    robots_meta = []
    if site.doc is not None:
        for meta in site.doc.iter("meta"):
            if (meta.get("name") or "").lower() in ("robots", "googlebot") and meta.get("content"):
                robots_meta.append(meta.get("content").lower())
    tag = (page.headers.get("X-Robots-Tag") or "").lower()
    blocking = [v for v in robots_meta + [tag] if re.search(r"\b(noai|noimageai|noindex|none)\b", v)]
    if blocking:
        return Result(PARTIAL, f"The page is served but asks agents not to use it ({blocking[0]}).", evidence,
                      fix("Drop noai/noindex from the robots meta tag and X-Robots-Tag on pages agents should read.", '<meta name="robots" content="index, follow">'))
    if page.final_url and page.final_url != site.url and re.search(r"/(login|signin|sign-in|auth)\b", page.final_url):
        return Result(FAIL, "The page redirects an agent to a login.", evidence, wall_fix)
    return Result(PASS, f"The page is served to an AI agent (HTTP {page.status}, {page.elapsed:.2f} s).", evidence,
                  details={"status": page.status, "seconds": round(page.elapsed, 3), "final_url": page.final_url})


SHELL_MARKERS = (
    r'<div id="(root|app|__next|__nuxt)">\s*</div>',
    r"<app-root>\s*</app-root>",
    r"<noscript>[^<]*(enable|requires?) javascript",
)


def readable_without_javascript(site: Site) -> Result:
    page = site.page
    if not page.ok or site.doc is None:
        return Result(ERROR, "The page was not served, so what it shows without JavaScript cannot be judged.", [page.evidence(excerpt=False)])
    words = len(site.visible_text.split())
    html = page.text[:500_000]
    shell = [m for m in SHELL_MARKERS if re.search(m, html, re.I)]
    script_bytes = sum(len(el.text_content()) for el in site.doc.iter("script"))
    has_h1 = any(el.text_content().strip() for el in site.doc.iter("h1"))
    details = {"words": words, "h1": has_h1, "spa_shell": bool(shell), "script_bytes": script_bytes}
    evidence = [page.evidence(f"{words} words of text without JavaScript{'; an app shell' if shell else ''}.")]
    shell_fix = fix("Render the page on the server (SSR or static generation) so that the text is in the HTML.",
                    "<main>\n  <h1>Product name</h1>\n  <p>What it does, for whom, and how to start.</p>\n</main>")
    if words >= 150 and has_h1:
        return Result(PASS, f"{words} words and a heading are readable without JavaScript.", evidence, details=details)
    if words < 30:
        return Result(FAIL, f"Without JavaScript the page shows only {words} words.", evidence, shell_fix, details)
    return Result(PARTIAL, f"Without JavaScript the page shows {words} words{'' if has_h1 else ' and no <h1>'}.", evidence, shell_fix, details)


GENERIC_TITLES = {"home", "homepage", "index", "react app", "vite app", "untitled", "welcome", "document", "loading..."}


def title_and_description(site: Site) -> Result:
    page = site.page
    if site.doc is None:
        return Result(ERROR, "The page was not served as HTML, so its title cannot be read.", [page.evidence(excerpt=False)])
    doc = site.doc
    title = " ".join((doc.findtext(".//title") or "").split())
    metas = {}
    for meta in doc.iter("meta"):
        key = (meta.get("name") or meta.get("property") or "").lower()
        if key and meta.get("content") and key not in metas:
            metas[key] = " ".join(meta.get("content").split())
    description = metas.get("description", "")
    og_title, og_description = metas.get("og:title", ""), metas.get("og:description", "")
    details = {"title": title, "description": description, "og_title": og_title, "og_description": og_description,
               "lang": doc.get("lang"), "canonical": next((lk["url"] for lk in site.links_with("canonical")), None)}
    title_good = 10 <= len(title) <= 70 and title.lower() not in GENERIC_TITLES
    description_good = 50 <= len(description) <= 160
    evidence = [{"url": page.final_url or page.url, "status": page.status, "excerpt": f"<title>{title[:120]}</title> · description: {description[:160]}"}]
    snippet = ('<title>Product: what it does in a few words</title>\n'
               '<meta name="description" content="One or two sentences (50-160 characters): what it does, for whom.">')
    if title_good and description_good:
        return Result(PASS, "The page has a specific title and a description of useful length.", evidence, details=details)
    problems = []
    if not title_good:
        problems.append("no title" if not title else f"a title of {len(title)} characters or a generic one")
    if not description_good:
        problems.append("no meta description" if not description else f"a description of {len(description)} characters")
    if title_good or description_good or (og_title and og_description):
        return Result(PARTIAL, "The page has " + " and ".join(problems) + ".", evidence,
                      fix("Give the page a specific <title> (10-70 characters) and a meta description (50-160).", snippet), details)
    return Result(FAIL, "The page has " + " and ".join(problems) + ".", evidence,
                  fix("Give the page a specific <title> (10-70 characters) and a meta description (50-160).", snippet), details)


USEFUL_TYPES = {"organization", "corporation", "website", "softwareapplication", "webapplication", "mobileapplication",
                "webapi", "product", "service", "offer", "aggregateoffer", "faqpage", "howto", "article", "localbusiness"}


def _types(item) -> list[str]:
    found = []
    if isinstance(item, dict):
        kind = item.get("@type") or item.get("type")
        for value in kind if isinstance(kind, list) else [kind]:
            if isinstance(value, str):
                found.append(value.rsplit("/", 1)[-1])
        for key in ("@graph", "properties", "children"):
            value = item.get(key)
            if isinstance(value, list):
                for child in value:
                    found += _types(child)
            elif isinstance(value, dict):
                found += _types(value)
    elif isinstance(item, list):
        for child in item:
            found += _types(child)
    return found


def structured_data(site: Site) -> Result:
    page = site.page
    if site.doc is None:
        return Result(ERROR, "The page was not served as HTML, so its structured data cannot be read.", [page.evidence(excerpt=False)])
    data = site.structured
    jsonld, microdata, opengraph = data.get("json-ld", []), data.get("microdata", []), data.get("opengraph", [])
    types = sorted(set(_types(jsonld) + _types(microdata)))
    useful = [t for t in types if t.lower() in USEFUL_TYPES]
    details = {"json_ld": len(jsonld), "microdata": len(microdata), "opengraph": bool(opengraph), "types": types[:20],
               "invalid_json_ld": data.get("invalid_json_ld", 0)}
    evidence = [{"url": page.final_url or page.url, "status": page.status,
                 "excerpt": f"types: {', '.join(types[:10]) or 'none'}; JSON-LD blocks {len(jsonld)}, microdata items {len(microdata)}"}]
    snippet = ('<script type="application/ld+json">\n{"@context": "https://schema.org", "@type": "SoftwareApplication",\n'
               ' "name": "Product", "description": "What it does.", "applicationCategory": "BusinessApplication",\n'
               ' "offers": {"@type": "Offer", "price": "5", "priceCurrency": "USD"}}\n</script>')
    if useful:
        return Result(PASS, f"Structured data describes the page as {', '.join(useful[:4])}.", evidence, details=details)
    if types or opengraph or details["invalid_json_ld"]:
        reason = "invalid JSON-LD" if details["invalid_json_ld"] and not types else ("only OpenGraph tags" if not types else f"types {', '.join(types[:4])}")
        return Result(PARTIAL, f"Some structured data, but {reason}: nothing that says what the product is.", evidence,
                      fix("Add JSON-LD naming the organization and the product (SoftwareApplication, Product or Service, with offers).", snippet), details)
    return Result(FAIL, "The page has no structured data.", evidence,
                  fix("Add JSON-LD naming the organization and the product.", snippet))


def _looks_like_markdown(response) -> bool:
    text = response.text.lstrip()
    if not response.ok or not text or text[:1] == "<":
        return False
    if response.content_type not in ("text/markdown", "text/x-markdown", "text/plain"):
        return False
    return bool(re.search(r"(?m)^#{1,6} \S|\[[^\]]+\]\([^)]+\)|^[-*] \S", text))


def markdown_version(site: Site) -> Result:
    negotiated = site.markdown_response
    snippet = ("Answer `Accept: text/markdown` with the page in Markdown (Content-Type: text/markdown; Vary: Accept),\n"
               "or link it from the page:\n"
               f'<link rel="alternate" type="text/markdown" href="{site.markdown_candidate}">')
    if site.markdown_negotiated and _looks_like_markdown(negotiated):
        return Result(PASS, "The page answers Accept: text/markdown with Markdown.", [negotiated.evidence()],
                      details={"how": "content negotiation", "vary_accept": "accept" in (negotiated.headers.get("Vary") or "").lower()})
    candidate = site.get(site.markdown_candidate, accept="text/markdown, text/plain;q=0.5", max_bytes=2_000_000, truncate=True)
    linked = bool(site.links_with("alternate", "text/markdown"))
    how = "a rel=alternate link" if linked else "the .md convention of llms.txt"
    evidence = [negotiated.evidence("Accept: text/markdown", excerpt=False), candidate.evidence(how)]
    if _looks_like_markdown(candidate):
        return Result(PASS, f"A Markdown version is at {candidate.final_url or candidate.url} ({how}).", evidence, details={"how": how})
    if linked and candidate.ok:
        return Result(PARTIAL, "The page links a Markdown version, but it does not answer with Markdown.", evidence,
                      fix("Serve the linked Markdown version as text/markdown.", snippet))
    if negotiated.error and candidate.error:
        return Result(ERROR, "No Markdown version could be fetched.", evidence)
    return Result(FAIL, "There is no Markdown version of the page.", evidence, fix("Offer the page in Markdown.", snippet))
