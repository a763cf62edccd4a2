"""One Beacon scan: fetch the site by the plan, run the 17 checks, judge, score. No database here.

`scan_site(url)` is the operation every caller uses (the Celery task, the x402 route, the sample);
it returns the report as a plain dict.
"""

import time

from django.conf import settings

from core import clock

from . import constants, scoring
from .checks import find, read, use
from .constants import ERROR
from .fetcher import Fetcher
from .judge import EmbeddedJudge, default_judge
from .site import Result, Site


def _entry(check_id: str, result: Result) -> dict:
    spec = constants.CHECKS_BY_ID[check_id]
    return {"id": spec.id, "category": spec.category, "title": spec.title, "judged_by_model": spec.judged_by_model,
            "weight": spec.weight, "status": result.status, "points": constants.POINTS.get(result.status),
            "summary": result.summary, "evidence": result.evidence[:6], "fix": result.fix if result.status != "pass" else None,
            "details": result.details}


def _material(site: Site) -> str:
    """What the judge reads: the page's visible text, the llms.txt summary, descriptions in structured data and cards."""
    parts = []
    if site.doc is not None:
        title = site.doc.findtext(".//title")
        if title:
            parts.append(" ".join(title.split()))
        for meta in site.doc.iter("meta"):
            if (meta.get("name") or meta.get("property") or "").lower() in ("description", "og:description") and meta.get("content"):
                parts.append(" ".join(meta.get("content").split()))
                break
    parts.append(site.visible_text)
    if site.llms.ok and not site.llms.text.lstrip().startswith("<"):
        parts.append(site.llms.text[:4000])
    for item in site.structured.get("json-ld", [])[:5] if site.doc is not None else []:
        if isinstance(item, dict):
            for key in ("description", "name"):
                if isinstance(item.get(key), str):
                    parts.append(item[key])
            offers = item.get("offers")
            if isinstance(offers, dict) and offers.get("price") is not None:
                parts.append(f"Price: {offers.get('price')} {offers.get('priceCurrency', '')}".strip() + ".")
    return "\n".join(p for p in parts if p)[:12_000]


def _guarded(check_id: str, function, *args, **kwargs) -> dict:
    try:
        return _entry(check_id, function(*args, **kwargs))
    except Exception as exc:  # noqa: BLE001 - one check's bug or a hostile document must not lose the other sixteen
        import logging

        logging.getLogger(__name__).exception("beacon check %s failed", check_id)
        return _entry(check_id, Result(ERROR, f"The check could not be completed ({type(exc).__name__})."))


def scan_site(url: str, *, judge=None, parallel: int | None = None, fetcher: Fetcher | None = None) -> dict:
    """Scan `url` (already validated as a public http(s) URL) and return the report."""
    started = time.monotonic()
    fetcher = fetcher or Fetcher(parallel=parallel)
    site = Site(url, fetcher)
    site.run_plan()
    results: dict[str, dict] = {}
    results["robots_ai_access"] = _guarded("robots_ai_access", find.robots_ai_access, site)
    results["sitemap"] = _guarded("sitemap", find.sitemap, site)
    results["llms_txt"] = _guarded("llms_txt", find.llms_txt, site)
    results["served_to_agents"] = _guarded("served_to_agents", read.served_to_agents, site)
    results["readable_without_javascript"] = _guarded("readable_without_javascript", read.readable_without_javascript, site)
    results["title_and_description"] = _guarded("title_and_description", read.title_and_description, site)
    results["structured_data"] = _guarded("structured_data", read.structured_data, site)
    results["markdown_version"] = _guarded("markdown_version", read.markdown_version, site)
    results["mcp_server_card"] = _guarded("mcp_server_card", use.mcp_server_card, site)
    results["mcp_endpoint"] = _guarded("mcp_endpoint", use.mcp_endpoint, site)
    has_mcp = results["mcp_server_card"]["status"] in ("pass", "partial") or results["mcp_endpoint"]["status"] in ("pass", "partial")
    results["mcp_registry"] = _guarded("mcp_registry", find.mcp_registry, site, has_mcp=has_mcp)
    results["a2a_agent_card"] = _guarded("a2a_agent_card", use.a2a_agent_card, site)
    results["openapi"] = _guarded("openapi", use.openapi, site)

    judge = judge or default_judge()
    material = _material(site) if site.page.ok else ""
    product = (site.doc.findtext(".//title") or "").split("|")[0].split("—")[0].split(" - ")[0].strip() if site.doc is not None else ""
    if material:
        try:
            answers = judge.judge(material, product=product)
        except Exception:  # noqa: BLE001 - a broken judge falls back to the embedded one
            answers = EmbeddedJudge().judge(material, product=product)
        for check_id, answer in answers.items():
            evidence = [{"url": site.page.final_url or url, "status": site.page.status, "note": f"judge: {answer.judge}"}
                        | ({"excerpt": answer.quote[:300]} if answer.quote else {})]
            fixed = {"text": answer.suggestion, "snippet": ""} if answer.suggestion else None
            results[check_id] = _entry(check_id, Result(answer.verdict, answer.reason, evidence, fixed, {"judge": answer.judge, "quote": answer.quote}))
    else:
        for check_id in ("says_what_it_does", "says_how_to_start", "states_price"):
            results[check_id] = _entry(check_id, Result(ERROR, "The page could not be read, so it could not be judged.", [site.page.evidence(excerpt=False)]))
    results["agent_payments"] = _guarded("agent_payments", use.agent_payments, site, states_price=results["states_price"]["status"])

    checks = [results[spec.id] for spec in constants.CHECKS]
    return {
        "url": url,
        "scanned_at": clock.now().isoformat(),
        "seconds": round(time.monotonic() - started, 3),
        "requests_made": fetcher.requests_made,
        "request_budget": fetcher.max_requests,
        "judge": getattr(judge, "name", "embedded") if not isinstance(judge, type) else "embedded",
        "scores": scoring.score(checks),
        "checks": checks,
        "suggestions": scoring.suggestions(checks),
        "requests": fetcher.log,
        "user_agent": f"{constants.USER_AGENT_PRODUCT} (+{settings.BASE_URL}/beacon)",
    }
