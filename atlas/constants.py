"""Atlas limits, purpose classes, verification methods and datasets (spec parts 2.4 and 8)."""

DATA_VERSION = "2026-09-29"

# Purpose classes: the registration enum, with the registry's label for each.
PURPOSES = {
    "search_index": "Search / retrieval index",
    "training_crawl": "Training / bulk crawl",
    "browser_agent": "Autonomous / browser agent",
    "user_fetch": "User-triggered fetcher",
    "coding_agent": "Coding agent",
    "api_agent": "API agent",
    "other": "Other / undocumented",
}

KINDS = {
    "crawler": "Crawls many pages on its own schedule.",
    "fetcher": "Fetches a page when a person asks for it.",
    "agent": "Acts for a person: browses, fills forms, calls APIs or writes code.",
    "control_token": "A robots.txt control token only: no crawler sends it as a User-Agent.",
}

# How a claim to be an agent can be verified.
VERIFICATION = {
    "web_bot_auth": "Web Bot Auth signature",
    "ip_ranges": "Published IP ranges (and forward-confirmed reverse DNS)",
    "user_agent_only": "User-agent string only (spoofable)",
    "unattributable": "Unattributable / spoofed",
}

LOOKUP_MAX_CHARS = 2_000
AGENTS_LIMIT_MAX = 250
AGENTS_LIMIT_DEFAULT = 50
SIGHTINGS_DAYS_KEYLESS = 7
SIGHTINGS_DAYS_KEYED = 90

REGISTRATIONS_MAX = 10
NAME_MAX = 80
OPERATOR_MAX = 120
TOKENS_MIN, TOKENS_MAX = 1, 3
TOKEN_MIN_CHARS, TOKEN_MAX_CHARS = 5, 60
USER_AGENT_MAX = 500
DESCRIPTION_MAX = 600

PAID_TIERS = ("pro", "team")

# Datasets: id -> (title, formats, tier, what it holds).
DATASETS = {
    "agents": ("The registry", ("json", "csv"), "pro", "Every registry entry with its public and curated fields."),
    "traffic-shares": ("Traffic shares", ("json", "csv"), "free",
                       "Share of this service's sighted agent requests per agent and purpose class."),
    "osint": ("Operator findings", ("json", "csv"), "pro", "Findings recorded by our operators about registry entries."),
    "sector-scans": ("Sector scans", ("json", "csv"), "pro", "Beacon scans of sites grouped by sector."),
    "agent-consumer-matrix": ("Agent-consumer matrix", ("csv",), "pro", "Which agents reach which kinds of site."),
    "fiat-vs-crypto": ("Fiat versus crypto", ("csv",), "pro", "Payment rails offered to agents by the sites scanned."),
    "agent-consumers-2026-09": ("Agent consumers, September 2026", ("md",), "pro",
                                "A report on the registry and the traffic this service saw."),
}
