"""The official Stripe SDK, configured once: its HTTP calls go through core.safe_http.

Stripe is one of the two third parties the service calls at a configured address (the other is the x402
facilitator). `SafeHttpClient` is a `stripe.HTTPClient` built on `safe_http.fetch`, so those calls get
the same address checks, time caps and size caps as every other outbound request; tests point
STRIPE_API_BASE at a loopback server inside `safe_http.allow_loopback()`.
"""

from __future__ import annotations

import stripe
from django.conf import settings

from core import safe_http
from core.errors import ServiceUnavailable

MAX_RESPONSE_BYTES = 5_000_000


class SafeHttpClient(stripe.HTTPClient):
    """stripe.HTTPClient over core.safe_http.fetch (no redirects: Stripe's API does not send any)."""

    name = "safe_http"

    def __init__(self, timeout: float):
        super().__init__()
        self.timeout = timeout

    def request(self, method, url, headers, post_data=None, *, _usage=None):
        try:
            response = safe_http.fetch(
                url, method=method, headers=dict(headers or {}), body=post_data, timeout=self.timeout,
                deadline=self.timeout, max_bytes=MAX_RESPONSE_BYTES, allow_redirects=False,
            )
        except safe_http.FetchTimeout as exc:
            raise stripe.APIConnectionError(f"Stripe did not answer in time: {exc.message}", should_retry=True) from exc
        except safe_http.SafeHttpError as exc:
            raise stripe.APIConnectionError(f"Stripe could not be reached: {exc.message}", should_retry=False) from exc
        return response.body, response.status, dict(response.headers)

    def request_stream(self, method, url, headers, post_data=None, *, _usage=None):
        content, status, headers = self.request(method, url, headers, post_data)
        return iter([content]), status, headers

    def close(self):
        pass


def client() -> stripe.StripeClient:
    """A StripeClient for the configured key and API base; 503 while billing is not enabled."""
    if not settings.BILLING_ENABLED:
        raise ServiceUnavailable("Billing is not enabled on this service.")
    return stripe.StripeClient(
        settings.STRIPE_SECRET_KEY,
        base_addresses={"api": settings.STRIPE_API_BASE.rstrip("/")},
        http_client=SafeHttpClient(settings.STRIPE_TIMEOUT_SECONDS),
        max_network_retries=1,
    )


def plain(obj) -> dict:
    """A Stripe object as plain JSON data (dicts and lists)."""
    if obj is None:
        return {}
    if hasattr(obj, "to_dict"):
        return obj.to_dict()
    return obj
