"""Webhooks: one endpoint per organization, every event signed, delivered from Celery with retries.

Signature (one header, the way Stripe and Standard Webhooks do it):

    Svc-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>

A receiver recomputes the HMAC over the timestamp, a dot and the raw body with its secret
(`whsec_…`), compares in constant time, and refuses timestamps older than five minutes.
Delivery is at least once: receivers de-duplicate on the event `id` (also sent as `Svc-Event-Id`).

Every delivery lives in the database; a worker claims one with a conditional UPDATE and a lease,
so a worker killed mid-delivery loses nothing: the sweeper hands the delivery out again when the
lease runs out. Failures are retried with backoff (WEBHOOK_RETRY_DELAYS) and each attempt recorded.
"""

import hashlib
import hmac
import json
import logging
import secrets
import time
from datetime import timedelta
from urllib.parse import urlsplit

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q

from accounts.models import Organization, Webhook, WebhookAttempt, WebhookDelivery, WebhookEvent
from core import clock, safe_http, secretbox
from core.errors import BadRequest
from core.ids import new_id

log = logging.getLogger(__name__)

SIGNATURE_HEADER = "Svc-Signature"
EVENT_ID_HEADER = "Svc-Event-Id"
EVENT_TYPE_HEADER = "Svc-Event-Type"
TOLERANCE_SECONDS = 300
SECRET_PREFIX = "whsec_"

# Every kind of event, and when it is sent. Products emit them only through webhook_emit().
EVENT_TYPES = {
    "webhook.test": "Sent by POST /api/v1/webhook/test, to check the endpoint and its signature.",
    "account.key.created": "An API key was issued.",
    "account.key.revoked": "An API key was revoked.",
    "account.domain.verified": "The organization proved control of its domain.",
    "account.recovered": "The account was recovered by domain proof: every key was revoked and one issued.",
    "evaluation.failed": "A Guardrails evaluation's aggregate verdict was fail (action block or redact).",
    "evaluation.review": "A Guardrails evaluation was held for review.",
    "tower.action.pending_review": "A Tower action waits for a person's review.",
    "tower.action.executed": "A Tower action was executed (automatically or after approval).",
    "tower.action.rejected": "A Tower action was refused by policy or declined by a reviewer.",
    "atlas.registration.published": "An Atlas registration was verified and published in the registry.",
    "atlas.registration.pending_review": "An Atlas registration was verified and held for review.",
    "beacon.check.finished": "A Beacon check finished; its report is ready.",
    "billing.plan.changed": "The evaluation plan, Atlas tier or Tower subscription changed.",
    "billing.subscription.canceled": "A subscription was canceled (or scheduled to end).",
    "billing.credits.added": "Prepaid credits were added to the balance.",
    "billing.payment.failed": "A payment failed.",
}

LOOPBACK_HOSTS = {"localhost", "127.0.0.1", "::1", "[::1]"}


def webhook_url_check(url: str) -> str:
    """https anywhere public, or http on localhost only; 400 naming `url` otherwise."""
    if not isinstance(url, str) or len(url) > 2000:
        raise BadRequest("url must be an https URL of at most 2000 characters.")
    parts = urlsplit(url.strip())
    host = (parts.hostname or "").lower()
    if parts.scheme == "http":
        if host not in LOOPBACK_HOSTS:
            raise BadRequest("url must use https; http is allowed for localhost only.")
        return url.strip()
    if parts.scheme != "https":
        raise BadRequest("url must be an https URL (http is allowed for localhost only).")
    try:
        safe_http.validate_url(url.strip())
    except safe_http.SafeHttpError as exc:
        raise BadRequest(f"url: {exc.message}") from None
    return url.strip()


def signature_header(secret: str, body: bytes, timestamp: int) -> str:
    mac = hmac.new(secret.encode(), str(timestamp).encode() + b"." + body, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={mac}"


def signature_verify(secret: str, header: str, body: bytes, *, now: float | None = None,
                     tolerance: int = TOLERANCE_SECONDS) -> bool:
    """What a receiver does: True when `header` signs `body` with `secret` within the tolerance."""
    try:
        fields = dict(part.split("=", 1) for part in header.split(","))
        timestamp = int(fields["t"])
    except (ValueError, KeyError):
        return False
    if abs((now if now is not None else time.time()) - timestamp) > tolerance:
        return False
    expected = signature_header(secret, body, timestamp).split("v1=", 1)[1]
    return hmac.compare_digest(expected, fields.get("v1", ""))


def webhook_get(*, org: Organization) -> Webhook | None:
    return Webhook.objects.filter(org=org).first()


def webhook_set(*, org: Organization, url: str, actor: str = "", ip: str = "") -> tuple[Webhook, str]:
    """Set (or replace) the endpoint with a new signing secret, returned once."""
    from accounts.services import audit_record

    url = webhook_url_check(url)
    secret = SECRET_PREFIX + secrets.token_urlsafe(32)
    with transaction.atomic():
        existed = Webhook.objects.filter(org=org).exists()
        hook, _ = Webhook.objects.update_or_create(
            org=org, defaults={"url": url, "secret_sealed": secretbox.seal(secret), "secret_prefix": secret[:12]}
        )
        audit_record(org=org, action="accounts.webhook.rotated" if existed else "accounts.webhook.set", actor=actor,
                     target=urlsplit(url).hostname or "", data={"url": url, "secret_prefix": hook.secret_prefix}, ip=ip)
    return hook, secret


def webhook_delete(*, org: Organization, actor: str = "", ip: str = "") -> bool:
    from accounts.services import audit_record

    deleted, _ = Webhook.objects.filter(org=org).delete()
    if deleted:
        audit_record(org=org, action="accounts.webhook.deleted", actor=actor, ip=ip)
    return bool(deleted)


def webhook_emit(*, org: Organization, type: str, data: dict) -> WebhookEvent | None:
    """Record an event and, if the organization has a webhook, queue its delivery after commit."""
    if type not in EVENT_TYPES:
        raise ValueError(f"unknown webhook event type {type!r}")
    hook = Webhook.objects.filter(org=org).only("url").first()
    if hook is None:
        return None
    now = clock.now()
    event = WebhookEvent.objects.create(id=new_id("evt_"), org=org, type=type, data=data, created_at=now)
    delivery = WebhookDelivery.objects.create(event=event, url=hook.url, next_attempt_at=now, created_at=now)
    transaction.on_commit(lambda: _enqueue(delivery.pk))
    return event


def _enqueue(delivery_id: int) -> None:
    from accounts.tasks import webhook_deliver

    try:
        webhook_deliver.delay(delivery_id)
    except Exception:  # noqa: BLE001 - the broker is down: the sweeper will find the delivery
        log.warning("webhook delivery %s could not be queued; the sweeper will retry it", delivery_id)


def event_body(event: WebhookEvent) -> bytes:
    payload = {"id": event.id, "type": event.type, "created": event.created_at.isoformat(), "org_id": str(event.org_id),
               "data": event.data}
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()


def _claim(delivery_id: int) -> bool:
    now = clock.now()
    due = Q(status=WebhookDelivery.PENDING, next_attempt_at__lte=now) | Q(status=WebhookDelivery.DELIVERING, locked_until__lte=now)
    lease = now + timedelta(seconds=settings.WEBHOOK_LEASE_SECONDS)
    return bool(WebhookDelivery.objects.filter(due, pk=delivery_id).update(status=WebhookDelivery.DELIVERING, locked_until=lease))


def webhook_deliver(delivery_id: int) -> str:
    """Claim a due delivery, POST it once, record the attempt; the outcome status."""
    if not _claim(delivery_id):
        return "not due"
    delivery = WebhookDelivery.objects.select_related("event", "event__org__webhook").get(pk=delivery_id)
    event = delivery.event
    hook = getattr(event.org, "webhook", None)
    number = delivery.attempts + 1
    started = time.monotonic()
    status_code, error = None, ""
    if hook is None:
        error = "The webhook was removed before delivery."
    else:
        body = event_body(event)
        headers = {
            "Content-Type": "application/json",
            SIGNATURE_HEADER: signature_header(secretbox.unseal(hook.secret_sealed), body, int(clock.now().timestamp())),
            EVENT_ID_HEADER: event.id,
            EVENT_TYPE_HEADER: event.type,
        }
        try:
            response = safe_http.fetch(hook.url, method="POST", body=body, headers=headers, allow_redirects=False,
                                       timeout=settings.WEBHOOK_TIMEOUT_SECONDS, deadline=settings.WEBHOOK_TIMEOUT_SECONDS,
                                       max_bytes=65536, truncate=True)
            status_code = response.status
            if not response.ok:
                error = f"The receiver answered {response.status}."
        except safe_http.SafeHttpError as exc:
            error = exc.message[:300]
    duration_ms = int((time.monotonic() - started) * 1000)
    now = clock.now()
    WebhookAttempt.objects.create(delivery=delivery, number=number, status_code=status_code, error=error,
                                  duration_ms=duration_ms, created_at=now)
    delays = settings.WEBHOOK_RETRY_DELAYS
    if not error:
        outcome = {"status": WebhookDelivery.SUCCEEDED, "delivered_at": now}
    elif hook is None or number > len(delays):
        outcome = {"status": WebhookDelivery.FAILED}
    else:
        outcome = {"status": WebhookDelivery.PENDING, "next_attempt_at": now + timedelta(seconds=delays[number - 1])}
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        attempts=F("attempts") + 1, last_status_code=status_code, last_error=error, locked_until=None, **outcome
    )
    if error:
        log.info("webhook delivery %s attempt %s failed: %s", delivery.pk, number, error)
    return outcome["status"]


def webhook_sweep(*, limit: int = 500) -> int:
    """Queue every delivery that is due (retries, lost messages, expired leases); how many."""
    now = clock.now()
    due = Q(status=WebhookDelivery.PENDING, next_attempt_at__lte=now) | Q(status=WebhookDelivery.DELIVERING, locked_until__lte=now)
    ids = list(WebhookDelivery.objects.filter(due).order_by("next_attempt_at").values_list("pk", flat=True)[:limit])
    for delivery_id in ids:
        _enqueue(delivery_id)
    return len(ids)
