"""Beacon's fixed vocabulary: the 17 checks, their categories and weights, verdicts, check states, limits."""

from dataclasses import dataclass

CATEGORIES = ("find", "read", "use")

# Verdicts of one check. `not_applicable` and `error` are left out of every score.
PASS, PARTIAL, FAIL, NOT_APPLICABLE, ERROR = "pass", "partial", "fail", "not_applicable", "error"
VERDICTS = (PASS, PARTIAL, FAIL, NOT_APPLICABLE, ERROR)
POINTS = {PASS: 1.0, PARTIAL: 0.5, FAIL: 0.0}


@dataclass(frozen=True)
class CheckSpec:
    id: str
    category: str
    judged_by_model: bool
    weight: int  # 1 to 3: how much an agent loses when the check fails; orders the suggestions
    title: str


CHECKS: tuple[CheckSpec, ...] = (
    CheckSpec("robots_ai_access", "find", False, 3, "AI agents may fetch the site (robots.txt)"),
    CheckSpec("sitemap", "find", False, 2, "A sitemap lists the pages"),
    CheckSpec("llms_txt", "find", False, 2, "An llms.txt guide for agents"),
    CheckSpec("mcp_registry", "find", False, 1, "Listed in the MCP Registry"),
    CheckSpec("served_to_agents", "read", False, 3, "The page is served to an AI agent, not a bot wall"),
    CheckSpec("readable_without_javascript", "read", False, 3, "Readable without running JavaScript"),
    CheckSpec("title_and_description", "read", False, 2, "A clear title and description"),
    CheckSpec("structured_data", "read", False, 1, "Structured data (JSON-LD, microdata)"),
    CheckSpec("markdown_version", "read", False, 1, "A Markdown version of the page"),
    CheckSpec("says_what_it_does", "read", True, 3, "Says what the product does"),
    CheckSpec("mcp_server_card", "use", False, 2, "An MCP server card"),
    CheckSpec("mcp_endpoint", "use", False, 3, "An MCP endpoint that lists its tools"),
    CheckSpec("a2a_agent_card", "use", False, 1, "An A2A agent card"),
    CheckSpec("openapi", "use", False, 2, "An OpenAPI description of the API"),
    CheckSpec("agent_payments", "use", False, 1, "Agents can pay (x402, ACP, UCP, AP2)"),
    CheckSpec("says_how_to_start", "use", True, 3, "Says how an agent starts without a person"),
    CheckSpec("states_price", "use", True, 2, "States the price"),
)
CHECKS_BY_ID = {spec.id: spec for spec in CHECKS}

CARD_PRICE_CENTS = 500  # Beacon for people: $5 by card (spec 5.7)

# States of a check. awaiting_payment -> queued (paid, or free when billing is off) -> running -> done | failed.
AWAITING_PAYMENT, QUEUED, RUNNING, DONE, FAILED = "awaiting_payment", "queued", "running", "done", "failed"
STATES = (AWAITING_PAYMENT, QUEUED, RUNNING, DONE, FAILED)
STATE_MEANINGS = {
    AWAITING_PAYMENT: "Waiting for the card payment at checkout_url; nothing has been fetched beyond the pre-flight.",
    QUEUED: "Paid (or free while billing is not enabled) and waiting for a worker.",
    RUNNING: "A worker is fetching the site; a worker that dies hands the check to another after its lease.",
    DONE: "Finished: the report is in `report`.",
    FAILED: "Gave up after its attempts (the reason is in `error`); a site that answers badly still gets a report.",
}

USER_AGENT_PRODUCT = "SvcBeacon/1.0"

# Named AI agents, judged by robots.txt product tokens (never by sending their user agents).
AI_AGENT_TOKENS = {
    "user_fetch": ("ChatGPT-User", "Claude-User", "Perplexity-User", "MistralAI-User"),
    "search": ("OAI-SearchBot", "Claude-SearchBot", "PerplexityBot", "DuckAssistBot"),
    "training": ("GPTBot", "ClaudeBot", "Google-Extended", "Applebot-Extended", "CCBot", "Meta-ExternalAgent", "Bytespider"),
}

# Body caps per kind of document (decoded bytes).
MAX_HTML_BYTES = 2_000_000
MAX_TEXT_BYTES = 512_000
MAX_JSON_BYTES = 1_000_000
MAX_SITEMAP_BYTES = 10_000_000
