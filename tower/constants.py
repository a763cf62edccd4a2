"""Tower's limits; each can be changed in settings (TOWER_* in config/settings.py)."""

from django.conf import settings


def agents_max_active() -> int:
    return getattr(settings, "TOWER_AGENTS_MAX_ACTIVE", 25)


def decisions_per_day() -> int:
    """The decision quota: POST decide and dry runs, per organization and UTC day."""
    return getattr(settings, "TOWER_DECISIONS_PER_DAY", 10_000)


def actions_per_month() -> int:
    """The monthly quota: actions (not dry runs) per organization and UTC calendar month."""
    return getattr(settings, "TOWER_ACTIONS_PER_MONTH", 5_000)


AGENT_KEY_PREFIX = "svc_agent_"
SCOPES_MAX = 50
IDEMPOTENCY_KEY_MAX = 128
PRICE_MONTHLY_USD = "49.00"
