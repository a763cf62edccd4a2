"""One metering mechanism for every metered route: a daily allowance, a per-minute burst, then credits.

A view declares `meter` and its units; `ApiView` calls `reserve()` before the handler runs and
`settle()` after: a response of 400 or more gives every unit back. The daily allowance is taken
with a conditional UPDATE (exact under concurrency); when it cannot cover the request, the rest
comes from prepaid credits in one transaction, or nothing is taken at all and the caller gets 429.
The per-minute burst is counted in the cache (Redis in production). Days are UTC days.
"""

import math
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from django.core.cache import cache
from django.db import connection, transaction
from django.db.models import F

from accounts.models import Organization
from billing import constants
from billing.models import Allowance, CreditBalance, ProductUsage
from core import clock
from core.errors import TooManyRequests


@dataclass(frozen=True)
class Meter:
    """What a metered route counts against, and how its headers are named."""

    name: str
    limit_header: str
    remaining_header: str
    reset_header: str | None
    burst: bool
    credits: bool
    refusal: str

    def daily_limit(self, org: Organization | None) -> int:
        if self.name == "atlas_lookups":
            if org is None:
                return constants.KEYLESS_DAILY_LOOKUPS
            return constants.ATLAS_TIERS.get(org.atlas_tier, constants.ATLAS_TIERS["free"]).daily_lookup_limit
        if org is None:
            return constants.KEYLESS_DAILY_EVALUATIONS
        return constants.PLANS.get(org.plan, constants.PLANS["free"]).daily_eval_limit

    def per_minute_limit(self, org: Organization | None) -> int:
        if org is None:
            return constants.KEYLESS_PER_MINUTE
        return constants.PLANS.get(org.plan, constants.PLANS["free"]).per_minute_limit


METERS = {
    "evaluations": Meter(
        "evaluations", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", burst=True, credits=True,
        refusal="The daily evaluation allowance and prepaid credits are used up; the allowance resets at UTC midnight.",
    ),
    "atlas_lookups": Meter(
        "atlas_lookups", "X-Atlas-Lookup-Limit", "X-Atlas-Lookup-Remaining", None, burst=False, credits=False,
        refusal="The daily Atlas lookup limit of this tier is reached; it resets at UTC midnight.",
    ),
}


@dataclass
class Reservation:
    """Units taken for one request, and what to give back if it fails."""

    meter: Meter
    subject: str
    org_id: object
    day: date
    units: int
    from_allowance: int
    from_credits: int
    burst_key: str | None
    headers: dict = field(default_factory=dict)
    settled: bool = False


def subject_of(org: Organization | None, client_address: str) -> str:
    return f"org:{org.pk}" if org is not None else f"ip:{client_address}"


def _unix(at: datetime) -> int:
    return int(at.timestamp())


def _burst_take(meter: Meter, subject: str, units: int, limit: int, now: datetime) -> tuple[str, dict]:
    window = int(now.timestamp()) // 60 * 60
    window_end = window + 60
    key = f"burst:{meter.name}:{subject}:{window}"
    try:
        count = cache.incr(key, units)  # one round trip in the common case: the window's counter exists
    except ValueError:
        cache.add(key, 0, timeout=120)
        count = cache.incr(key, units)
    headers = {"X-Burst-Limit": str(limit), "X-Burst-Reset": str(window_end)}
    if count > limit:
        cache.decr(key, units)
        wait = max(1, math.ceil(window_end - now.timestamp()))
        headers["X-Burst-Remaining"] = str(max(0, limit - (count - units)))
        raise TooManyRequests(
            f"The per-minute limit of {limit} is reached; retry in {wait} seconds.", retry_after=wait, headers=headers
        )
    headers["X-Burst-Remaining"] = str(limit - count)
    return key, headers


_TAKE_SQL = (
    "INSERT INTO {table} (subject, meter, day, used) VALUES (%s, %s, %s, %s) "
    "ON CONFLICT (subject, meter, day) DO UPDATE SET used = {table}.used + excluded.used "
    "WHERE {table}.used + excluded.used <= %s RETURNING used"
)


def _allowance_take(subject: str, meter: Meter, day: date, units: int, limit: int) -> int | None:
    """Take `units` if they fit under `limit` in one statement (PostgreSQL and SQLite alike);
    the count used afterwards, or None when they do not fit (nothing taken)."""
    if units > limit:
        return None
    sql = _TAKE_SQL.format(table=connection.ops.quote_name(Allowance._meta.db_table))
    with connection.cursor() as cursor:
        cursor.execute(sql, [subject, meter.name, day, units, limit])
        row = cursor.fetchone()
    return row[0] if row else None


def _daily_take(meter: Meter, org: Organization | None, subject: str, day: date, units: int, limit: int) -> tuple[int, int, int]:
    """(units from the allowance, units from credits, used today), or TooManyRequests with nothing taken."""
    used = _allowance_take(subject, meter, day, units, limit)
    if used is not None:
        return units, 0, used
    if not (meter.credits and org is not None):
        raise TooManyRequests(meter.refusal)
    rows = Allowance.objects.filter(subject=subject, meter=meter.name, day=day)
    with transaction.atomic():
        Allowance.objects.bulk_create([Allowance(subject=subject, meter=meter.name, day=day)], ignore_conflicts=True)
        row = rows.select_for_update().get()
        from_allowance = max(0, min(units, limit - row.used))
        from_credits = units - from_allowance
        if not CreditBalance.objects.filter(org=org, balance__gte=from_credits).update(balance=F("balance") - from_credits):
            raise TooManyRequests(meter.refusal)
        if from_allowance:
            rows.filter(pk=row.pk).update(used=F("used") + from_allowance)
    return from_allowance, from_credits, row.used + from_allowance


def _remaining(meter: Meter, subject: str, day: date, limit: int) -> int:
    used = Allowance.objects.filter(subject=subject, meter=meter.name, day=day).values_list("used", flat=True).first() or 0
    return max(0, limit - used)


def reserve(*, meter_name: str, org: Organization | None, client_address: str, units: int = 1) -> Reservation:
    """Take `units` for this request: burst first, then the day's allowance, then credits; or 429."""
    meter = METERS[meter_name]
    now = clock.now()
    day = now.date()
    subject = subject_of(org, client_address)
    limit = meter.daily_limit(org)
    reset = clock.next_utc_midnight(now)
    daily_headers = {meter.limit_header: str(limit)}
    if meter.reset_header:
        daily_headers[meter.reset_header] = str(_unix(reset))

    burst_key, burst_headers = None, {}
    if meter.burst:
        try:
            burst_key, burst_headers = _burst_take(meter, subject, units, meter.per_minute_limit(org), now)
        except TooManyRequests as refusal:
            refusal.headers.update({**daily_headers, meter.remaining_header: str(_remaining(meter, subject, day, limit))})
            raise
    try:
        from_allowance, from_credits, used = _daily_take(meter, org, subject, day, units, limit)
    except TooManyRequests as refusal:
        if burst_key:
            cache.decr(burst_key, units)
            burst_headers["X-Burst-Remaining"] = str(int(burst_headers["X-Burst-Remaining"]) + units)
        refusal.headers.update({**daily_headers, meter.remaining_header: str(_remaining(meter, subject, day, limit)), **burst_headers})
        refusal.headers["Retry-After"] = str(max(1, math.ceil((reset - now).total_seconds())))
        raise

    headers = {**daily_headers, meter.remaining_header: str(max(0, limit - used)), **burst_headers}
    if from_credits:
        balance = CreditBalance.objects.filter(org=org).values_list("balance", flat=True).first() or 0
        headers["X-Credits-Remaining"] = str(balance)
        headers["X-Quota-Source"] = "credits"
    return Reservation(meter, subject, org.pk if org else None, day, units, from_allowance, from_credits, burst_key, headers)


def release(reservation: Reservation, units: int | None = None) -> None:
    """Give back `units` (all by default): credits first, then the allowance, then the burst."""
    if reservation.settled:
        return
    give = reservation.units if units is None else min(units, reservation.units)
    credits_back = min(give, reservation.from_credits)
    allowance_back = min(give - credits_back, reservation.from_allowance)
    if credits_back:
        CreditBalance.objects.filter(org_id=reservation.org_id).update(balance=F("balance") + credits_back)
    if allowance_back:
        Allowance.objects.filter(subject=reservation.subject, meter=reservation.meter.name, day=reservation.day).update(
            used=F("used") - allowance_back
        )
    if reservation.burst_key and give:
        try:
            cache.decr(reservation.burst_key, give)
        except ValueError:
            pass  # the minute is over; its counter is gone
    reservation.units -= give
    reservation.from_credits -= credits_back
    reservation.from_allowance -= allowance_back


def settle(reservation: Reservation, *, product: str, succeeded: bool) -> None:
    """After the response: a failure gives everything back; a success is counted for /usage."""
    if reservation.settled:
        return
    if not succeeded:
        release(reservation)
    elif reservation.org_id is not None and reservation.units:
        usage_record(org_id=reservation.org_id, product=product, day=reservation.day, count=reservation.units,
                     credits_used=reservation.from_credits)
    reservation.settled = True


_USAGE_SQL = (
    "INSERT INTO {table} (org_id, product, day, count, credits_used) VALUES (%s, %s, %s, %s, %s) "
    "ON CONFLICT (org_id, product, day) DO UPDATE SET count = {table}.count + excluded.count, "
    "credits_used = {table}.credits_used + excluded.credits_used"
)


def usage_record(*, org_id, product: str, day: date, count: int, credits_used: int = 0) -> None:
    """Add to the organization's count for the product and day, in one statement."""
    sql = _USAGE_SQL.format(table=connection.ops.quote_name(ProductUsage._meta.db_table))
    with connection.cursor() as cursor:
        cursor.execute(sql, [ProductUsage._meta.get_field("org").get_db_prep_value(org_id, connection), product, day, count, credits_used])


def usage_window(days: int, *, today: date | None = None) -> list[date]:
    today = today or clock.now().date()
    return [today - timedelta(days=offset) for offset in range(days)]
