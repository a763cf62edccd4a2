"""The service's notion of now, in one place so tests can move time without sleeping."""

from datetime import UTC, datetime, timedelta


def now() -> datetime:
    return datetime.now(UTC)


def next_utc_midnight(at: datetime | None = None) -> datetime:
    at = at or now()
    return (at + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
