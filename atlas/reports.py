"""Overview, summary, datasets and the report: every figure comes from data the service holds.

Datasets are built by the Celery task `atlas.tasks.atlas_datasets_build` (and on first request when
none was built yet) from the registry, the sightings and the operators' findings. A dataset the
service has no data for (sector scans, the agent-consumer matrix, fiat versus crypto: they need
Beacon scan results, which Atlas does not hold yet) says so and has zero rows. None is invented.
"""

import csv
import io
import json

from accounts.models import Organization
from atlas import constants, services
from atlas.models import Agent, Dataset, Finding, Sighting
from atlas.seed import license_text
from billing.constants import ATLAS_TIERS
from core import clock
from core.errors import BadRequest, NotFound, PaymentRequired

ENDPOINTS = [
    "GET /api/v1/atlas", "GET /api/v1/atlas/agents", "GET /api/v1/atlas/agents/{slug}", "GET /api/v1/atlas/lookup",
    "POST /api/v1/atlas/lookup/verify", "GET /api/v1/atlas/summary", "GET /api/v1/atlas/sightings",
    "GET /api/v1/atlas/traffic", "GET /api/v1/atlas/datasets", "GET /api/v1/atlas/datasets/{id}",
    "GET /api/v1/atlas/report", "POST /api/v1/atlas/registrations", "GET /api/v1/atlas/registrations",
    "GET /api/v1/atlas/registrations/{id}", "DELETE /api/v1/atlas/registrations/{id}",
    "POST /api/v1/atlas/registrations/{id}/verify",
]
NO_DATA = "The service holds no Beacon scan results for Atlas yet, so this dataset has no rows."
_TERMS = {
    "free": "Terms: free to use and redistribute with attribution to Atlas.",
    "pro": "Terms: licensed to Atlas Pro and Team subscribers for internal use; Team adds internal redistribution.",
}
_CONTENT_TYPES = {"json": "application/json", "csv": "text/csv; charset=utf-8", "md": "text/markdown; charset=utf-8"}


def _tiers() -> list[dict]:
    return [{"id": t.id, "name": t.name, "price_monthly_usd": t.price_monthly_usd, "daily_lookup_limit": t.daily_lookup_limit,
             "full_registry": t.full_registry, "downloads": t.downloads, "internal_redistribution": t.internal_redistribution}
            for t in ATLAS_TIERS.values()]


def overview() -> dict:
    return {"data_version": constants.DATA_VERSION, "registry": services.registry_counts(),
            "datasets": [{"id": key, "title": meta[0], "formats": list(meta[1]), "tier": meta[2]}
                         for key, meta in constants.DATASETS.items()],
            "tiers": _tiers(), "keyless_daily_lookups": 10, "endpoints": ENDPOINTS}


def _traffic_shares() -> list[dict]:
    purposes = dict(Agent.objects.values_list("slug", "purpose"))
    names = dict(Agent.objects.values_list("slug", "name"))
    totals: dict[str, list[int]] = {}
    for slug, requests, verified in Sighting.objects.values_list("agent_slug", "requests", "verified"):
        item = totals.setdefault(slug, [0, 0])
        item[0] += requests
        item[1] += verified
    grand = sum(item[0] for item in totals.values())
    return [{"agent": slug, "name": names.get(slug, slug), "purpose": purposes.get(slug, "other"), "requests": item[0],
             "verified": item[1], "share": round(item[0] / grand, 6) if grand else 0.0}
            for slug, item in sorted(totals.items(), key=lambda kv: (-kv[1][0], kv[0]))]


def summary() -> dict:
    shares = _traffic_shares()
    browser = [row for row in shares if row["purpose"] in ("browser_agent", "coding_agent")]
    return {"data_version": constants.DATA_VERSION, "registry": services.registry_counts(),
            "browser_agent_traffic_shares": browser, "traffic_observed": bool(shares),
            "report_summary": report_markdown(org=None, section="summary")}


def _csv(rows: list[dict], columns: list[str]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, extrasaction="ignore")
    writer.writeheader()
    for row in rows:
        writer.writerow({key: json.dumps(value) if isinstance(value, (list, dict)) else value for key, value in row.items()})
    return out.getvalue()


def sightings_csv(body: dict) -> str:
    return _csv(body["sightings"], ["day", "agent", "name", "requests", "verified", "failed_verification"])


def _dataset_rows(dataset_id: str) -> tuple[list[dict], str]:
    if dataset_id == "agents":
        return [services.agent_full(agent) for agent in Agent.objects.order_by("slug")], ""
    if dataset_id == "traffic-shares":
        rows = _traffic_shares()
        return rows, "" if rows else "No sightings have been recorded yet, so this dataset has no rows."
    if dataset_id == "osint":
        rows = [{"agent": f.agent.slug, "title": f.title, "detail": f.detail, "source_url": f.source_url,
                 "observed_on": f.observed_on.isoformat() if f.observed_on else None, "recorded_at": f.created_at.isoformat()}
                for f in Finding.objects.select_related("agent").order_by("agent__slug", "-created_at")]
        return rows, "" if rows else "No operator findings have been recorded yet, so this dataset has no rows."
    return [], NO_DATA


def datasets_build() -> dict:
    """Build every dataset from the data held now; returns {id: rows}."""
    now = clock.now()
    built = {}
    licence = license_text()
    for dataset_id, (title, formats, tier, _what) in constants.DATASETS.items():
        files: dict[str, str] = {}
        if dataset_id == "agent-consumers-2026-09":
            files["md"] = report_markdown(org=None, section="full", _allowed=True)
            rows = len(Agent.objects.all())
            note = ""
        else:
            data, note = _dataset_rows(dataset_id)
            rows = len(data)
            columns = sorted({key for row in data for key in row}) or ["note"]
            if "json" in formats:
                files["json"] = json.dumps({"id": dataset_id, "built_at": now.isoformat(), "rows": rows, "note": note or None,
                                            "data": data}, ensure_ascii=False, indent=1)
            if "csv" in formats:
                files["csv"] = _csv(data, columns)
        Dataset.objects.update_or_create(id=dataset_id, defaults={
            "title": title, "tier": tier, "formats": list(formats), "rows": rows, "files": files, "note": note,
            "license": _TERMS[tier] + "\n\n" + licence, "built_at": now})
        built[dataset_id] = rows
    return built


def _datasets() -> dict[str, Dataset]:
    rows = {row.id: row for row in Dataset.objects.all()}
    if set(rows) != set(constants.DATASETS):
        datasets_build()
        rows = {row.id: row for row in Dataset.objects.all()}
    return rows


def datasets_list(*, org: Organization | None) -> dict:
    paid = services.is_paid(org)
    items = []
    for dataset_id, row in _datasets().items():
        items.append({"id": dataset_id, "title": row.title, "formats": row.formats, "rows": row.rows, "tier": row.tier,
                      "available": row.tier == "free" or paid, "built_at": row.built_at.isoformat(), "note": row.note or None,
                      "license": row.license})
    return {"tier": org.atlas_tier if org is not None else None, "datasets": sorted(items, key=lambda item: item["id"])}


def dataset_file(*, dataset_id: str, org: Organization | None, format: str | None) -> tuple[str, str, str]:
    if dataset_id not in constants.DATASETS:
        raise NotFound(f"No dataset {dataset_id!r}.")
    row = _datasets()[dataset_id]
    if row.tier != "free" and not services.is_paid(org):
        raise PaymentRequired(f"The {dataset_id} dataset needs Atlas Pro or Team.")
    chosen = format or row.formats[0]
    if chosen not in row.formats:
        raise BadRequest(f"format must be one of {', '.join(row.formats)} for the {dataset_id} dataset.")
    body = row.files.get(chosen, "")
    if chosen == "csv" or chosen == "md":
        body = body + ("\n" if chosen == "md" else "")
    return body, _CONTENT_TYPES[chosen], f"atlas-{dataset_id}.{chosen}"


def report_markdown(*, org: Organization | None, section: str, _allowed: bool = False) -> str:
    if section != "summary" and not (_allowed or services.is_paid(org)):
        raise PaymentRequired("The full report needs Atlas Pro or Team, or payment over x402.")
    counts = services.registry_counts()
    shares = _traffic_shares()
    lines = [f"# Atlas report (data version {constants.DATA_VERSION})", "", "## Summary", "",
             f"- Registry entries: {counts['agents']} ({counts['self_registered']} self-registered).",
             f"- Published IP lists held: {counts['ip_lists']}; generic clients recognised: {counts['generic_clients']}."]
    for purpose, label in constants.PURPOSES.items():
        if counts["by_purpose"].get(purpose):
            lines.append(f"- {label}: {counts['by_purpose'][purpose]}.")
    verifiable = counts["by_verification"].get("ip_ranges", 0) + counts["by_verification"].get("web_bot_auth", 0)
    lines.append(f"- Entries whose claim can be verified (IP ranges, reverse DNS or Web Bot Auth): {verifiable} of "
                 f"{counts['agents']}.")
    lines.append(f"- Requests by registered agents seen by this service: {sum(r['requests'] for r in shares)}"
                 + ("." if shares else " (no sightings recorded yet)."))
    if section == "summary":
        return "\n".join(lines) + "\n"
    lines += ["", "## Verification methods", "", "| Method | Entries |", "|---|---|"]
    for method, label in constants.VERIFICATION.items():
        lines.append(f"| {label} | {counts['by_verification'].get(method, 0)} |")
    lines += ["", "## Agents by purpose class", ""]
    for purpose, label in constants.PURPOSES.items():
        names = list(Agent.objects.filter(purpose=purpose).order_by("name").values_list("name", flat=True))
        if names:
            lines += [f"### {label} ({len(names)})", "", ", ".join(names), ""]
    lines += ["## Traffic seen by this service", ""]
    if shares:
        lines += ["| Agent | Purpose | Requests | Verified | Share |", "|---|---|---|---|---|"]
        lines += [f"| {r['name']} | {r['purpose']} | {r['requests']} | {r['verified']} | {r['share']:.2%} |" for r in shares[:50]]
    else:
        lines.append("No sightings have been recorded yet.")
    lines += ["", "## Sources", "", "Compiled from openly licensed data (MIT and CC0); see each entry's `sources`.", ""]
    return "\n".join(lines) + "\n"
