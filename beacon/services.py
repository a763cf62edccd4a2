"""Beacon's operations: start a check (pre-flight, payment state), run it, read it, save reports.

Every caller (the REST views, the Celery task, the x402 route of issue 9, MCP and A2A surfaces)
goes through these functions; `scan.scan_site` is the scan itself and touches no database.
"""

import logging
from datetime import timedelta
from urllib.parse import urlsplit, urlunsplit

from django.conf import settings
from django.db import transaction
from django.db.models import Q

from accounts.models import Organization
from billing import services as billing
from core import clock, safe_http
from core.errors import BadRequest, NotFound, ServiceUnavailable, Unprocessable
from core.ids import is_valid_id, new_id

from . import constants
from .fetcher import user_agent
from .models import Check, SavedReport

log = logging.getLogger(__name__)


def normalize_url(url: str) -> str:
    """The URL to scan: a public http(s) URL with a host, without fragment; 400 (BadRequest) otherwise."""
    if not isinstance(url, str) or not url.strip():
        raise BadRequest("url: give the address of the site, for example https://example.com/.")
    url = url.strip()
    try:
        safe_http.validate_url(url)
    except safe_http.UnsafeURL as exc:
        raise BadRequest(f"url: {exc.message[:1].lower() + exc.message[1:]}") from None
    parts = urlsplit(url)
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path or "/", parts.query, ""))


def _answers_at_all(url: str) -> None:
    """The pre-flight: one request; a site that does not answer at all is refused (before any payment)."""
    try:
        safe_http.fetch(url, method="GET", headers={"Accept": "text/html"}, timeout=settings.BEACON_FETCH_SECONDS,
                        deadline=settings.BEACON_FETCH_SECONDS, max_bytes=16_384, truncate=True,
                        max_redirects=settings.BEACON_MAX_REDIRECTS, user_agent=user_agent())
    except safe_http.UnsafeURL as exc:
        raise BadRequest(f"url: {exc.message[:1].lower() + exc.message[1:]}") from None
    except safe_http.TooManyRedirects:
        return  # it answers, with redirects: the scan will say so
    except safe_http.SafeHttpError as exc:
        raise Unprocessable(f"The site does not answer, so it was not checked and nothing is charged: {exc.message}") from None


def _owns_verified_domain(org: Organization | None, url: str) -> bool:
    if org is None or org.domain_verified_at is None or not org.domain:
        return False
    host = (urlsplit(url).hostname or "").lower()
    domain = org.domain.lower()
    return host == domain or host.endswith("." + domain)


def check_start(*, url: str, org: Organization | None = None) -> Check:
    """Validate the URL, pre-flight the site, and create the check: queued when free; otherwise awaiting_payment
    with a card checkout (Stripe) for $5 at `checkout_url`, and queued once billing reports the payment."""
    url = normalize_url(url)
    _answers_at_all(url)
    now = clock.now()
    if _owns_verified_domain(org, url):
        status, paid_by = constants.QUEUED, "free:verified_domain"
    elif not settings.BILLING_ENABLED and settings.BEACON_FREE_WHEN_BILLING_DISABLED:
        status, paid_by = constants.QUEUED, "free:billing_disabled"
    elif not settings.BILLING_ENABLED:
        raise ServiceUnavailable("Card payment for Beacon is not enabled on this service.")
    else:
        status, paid_by = constants.AWAITING_PAYMENT, ""
    with transaction.atomic():  # no check is left behind when the checkout cannot be created
        check = Check.objects.create(id=new_id("bcn_"), url=url, org=org, status=status, paid_by=paid_by, created_at=now)
        if status == constants.AWAITING_PAYMENT:
            report_page = check_status_url(check) + "?format=html"
            checkout = billing.payment_checkout_create(
                kind="beacon", reference=check.id, amount_cents=constants.CARD_PRICE_CENTS,
                description=f"Beacon check of {url}", org=org, success_url=report_page, cancel_url=report_page,
            )
            check.checkout_url = checkout["url"]
            check.save(update_fields=["checkout_url"])
    if status == constants.QUEUED:
        check_enqueue(check.id)
    return check


def check_run_now(*, url: str, paid_by: str, org: Organization | None = None, judge=None) -> Check:
    """For a caller that pays per request and waits for the answer (the x402 route of issue 9): pre-flight,
    then the scan in this process; the check is recorded like any other. Settle the payment only if the
    returned check is done."""
    url = normalize_url(url)
    _answers_at_all(url)
    check = Check.objects.create(id=new_id("bcn_"), url=url, org=org, status=constants.QUEUED, paid_by=paid_by, created_at=clock.now())
    return check_run(check_id=check.id, judge=judge) or Check.objects.get(id=check.id)


def check_enqueue(check_id: str) -> None:
    """Send the check to a worker once the transaction commits; if the broker is down, the sweeper will."""
    def send():
        from .tasks import check_run

        try:
            check_run.delay(check_id)
        except Exception:  # noqa: BLE001 - broker down: the sweeper picks queued checks up
            log.warning("beacon check %s could not be queued; the sweeper will retry it", check_id)

    transaction.on_commit(send)


def check_mark_paid(*, check_id: str, paid_by: str) -> Check:
    """Payment arrived (the card checkout, through billing.signals.payment_succeeded): awaiting_payment -> queued, once."""
    updated = Check.objects.filter(id=check_id, status=constants.AWAITING_PAYMENT).update(status=constants.QUEUED, paid_by=paid_by)
    if updated:
        check_enqueue(check_id)
    return Check.objects.get(id=check_id)


def on_payment_succeeded(sender, *, kind: str, reference: str, **kwargs) -> None:
    """billing.signals.payment_succeeded: a paid Beacon checkout (kind "beacon", reference = the check id) queues the scan."""
    if kind != "beacon":
        return
    if not Check.objects.filter(id=reference).exists():
        log.warning("beacon: a card payment arrived for unknown check %r", reference)
        return
    check_mark_paid(check_id=reference, paid_by="card")


def _claim(check_id: str) -> bool:
    now = clock.now()
    claimable = Q(status=constants.QUEUED) | Q(status=constants.RUNNING, lease_until__lt=now)
    from django.db.models import F

    return bool(Check.objects.filter(claimable, id=check_id).update(
        status=constants.RUNNING, started_at=now, lease_until=now + timedelta(seconds=settings.BEACON_LEASE_SECONDS),
        attempts=F("attempts") + 1))


def check_run(*, check_id: str, judge=None) -> Check | None:
    """Claim the check and scan the site; safe to call again (a finished or leased check is left alone)."""
    if not _claim(check_id):
        return None
    check = Check.objects.get(id=check_id)
    if check.attempts > settings.BEACON_MAX_ATTEMPTS:
        Check.objects.filter(id=check_id, status=constants.RUNNING).update(
            status=constants.FAILED, finished_at=clock.now(), lease_until=None, error="The check failed on every attempt.")
        check.refresh_from_db()
        _announce(check)
        return check
    from .scan import scan_site

    try:
        report = scan_site(check.url, judge=judge)
    except Exception:  # noqa: BLE001 - back to the queue (or failed after the last attempt); the sweeper retries
        log.exception("beacon check %s: the scan crashed", check_id)
        last = check.attempts >= settings.BEACON_MAX_ATTEMPTS
        Check.objects.filter(id=check_id, status=constants.RUNNING).update(
            status=constants.FAILED if last else constants.QUEUED, lease_until=None,
            finished_at=clock.now() if last else None, error="The scan failed unexpectedly." if last else "")
        check.refresh_from_db()
        if last:
            _announce(check)
        return check
    with transaction.atomic():
        updated = Check.objects.filter(id=check_id, status=constants.RUNNING).update(
            status=constants.DONE, report=report, finished_at=clock.now(), lease_until=None, error="")
        check.refresh_from_db()
        if updated:
            _announce(check)
    return check


def _announce(check: Check) -> None:
    if check.org_id is None:
        return
    from accounts.webhooks import webhook_emit

    webhook_emit(org=check.org, type="beacon.check.finished", data={
        "id": check.id, "url": check.url, "status": check.status,
        "scores": (check.report or {}).get("scores"), "status_url": check_status_url(check)})


def check_sweep() -> int:
    """Requeue checks a worker never took (broker down) or dropped (lease ran out); return how many."""
    now = clock.now()
    stale = Q(status=constants.QUEUED, created_at__lt=now - timedelta(seconds=60)) | Q(status=constants.RUNNING, lease_until__lt=now)
    ids = list(Check.objects.filter(stale).values_list("id", flat=True)[:100])
    for check_id in ids:
        check_enqueue(check_id)
    return len(ids)


def check_get(*, check_id: str) -> Check:
    if not is_valid_id(check_id, "bcn_"):
        raise NotFound("No Beacon check has this id.")
    check = Check.objects.filter(id=check_id).first()
    if check is None:
        raise NotFound("No Beacon check has this id.")
    return check


def check_status_url(check: Check) -> str:
    return f"{settings.BASE_URL}/api/v1/beacon/checks/{check.id}"


# Saved reports (organizations) -----------------------------------------------------------------


def saved_list(*, org: Organization) -> list[SavedReport]:
    return list(SavedReport.objects.filter(org=org).select_related("check_ref").order_by("-saved_at", "-id")[:500])


def saved_put(*, org: Organization, check_id: str) -> tuple[SavedReport, bool]:
    """Save one of the organization's own checks (idempotent); 404 for a check it did not start."""
    if not is_valid_id(check_id, "bcn_"):
        raise NotFound("No Beacon check of this organization has this id.")
    check = Check.objects.filter(id=check_id, org=org).first()
    if check is None:
        raise NotFound("No Beacon check of this organization has this id.")
    saved, created = SavedReport.objects.get_or_create(org=org, check_ref=check, defaults={"saved_at": clock.now()})
    return saved, created


def saved_delete(*, org: Organization, check_id: str) -> None:
    deleted, _ = SavedReport.objects.filter(org=org, check_ref_id=check_id).delete() if is_valid_id(check_id, "bcn_") else (0, None)
    if not deleted:
        raise NotFound("No saved Beacon report of this organization has this id.")
