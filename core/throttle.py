"""Per-address throttles for unmetered routes (signup, recovery, feedback), on the shared cache."""

from django_ratelimit.core import get_usage

from core.errors import TooManyRequests
from core.net import client_ip


def throttle(request, *, group: str, rate: str, message: str, key: str | None = None) -> None:
    """Count this request against `rate` (e.g. "20/h") for its address; 429 with Retry-After past it."""
    value = key or client_ip(request)
    usage = get_usage(request, group=group, key=lambda _group, _request: value, rate=rate, increment=True)
    if usage and usage["should_limit"]:
        raise TooManyRequests(message, retry_after=max(1, usage["time_left"]))
