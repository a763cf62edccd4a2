"""The client's address, as far as the configured proxies can be trusted."""

from django.conf import settings


def client_ip(request) -> str:
    """REMOTE_ADDR, or the address TRUSTED_PROXY_COUNT hops back in X-Forwarded-For."""
    remote = request.META.get("REMOTE_ADDR", "") or "unknown"
    hops = settings.TRUSTED_PROXY_COUNT
    if not hops:
        return remote
    forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if part.strip()]
    if len(forwarded) >= hops:
        return forwarded[-hops]
    return remote
