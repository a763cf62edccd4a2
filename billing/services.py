"""Billing operations that need no payment processor: the catalog, usage, credit grants."""

from dataclasses import asdict

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F

from accounts.models import Organization
from accounts.services import audit_record
from billing import constants, metering
from billing.models import Allowance, CreditBalance, CreditEntry, ProductUsage
from core import clock

PRODUCTS = ("guardrails", "preflight", "atlas")


def plans_catalog() -> dict:
    """The plan catalog and Atlas tiers of spec part 8."""
    return {
        "currency": "usd",
        "billing_enabled": settings.BILLING_ENABLED,
        "plans": [asdict(plan) for plan in constants.PLANS.values()],
        "atlas_tiers": [asdict(tier) for tier in constants.ATLAS_TIERS.values()],
        "credit_packs": [asdict(pack) for pack in constants.CREDIT_PACKS.values()],
        "keyless": {
            "daily_evaluations": constants.KEYLESS_DAILY_EVALUATIONS,
            "per_minute": constants.KEYLESS_PER_MINUTE,
            "max_input_chars": constants.KEYLESS_MAX_INPUT_CHARS,
            "daily_atlas_lookups": constants.KEYLESS_DAILY_LOOKUPS,
        },
    }


def credit_balance(org: Organization) -> int:
    return CreditBalance.objects.filter(org=org).values_list("balance", flat=True).first() or 0


def credits_grant(*, org: Organization, amount: int, reason: str, reference: str = "", actor: str = "system") -> bool:
    """Add credits once per `reference` (a payment id); False when that reference was already applied."""
    if amount <= 0:
        raise ValueError("amount must be positive")
    try:
        with transaction.atomic():
            CreditEntry.objects.create(org=org, amount=amount, reason=reason, reference=reference)
            CreditBalance.objects.get_or_create(org=org)
            CreditBalance.objects.filter(org=org).update(balance=F("balance") + amount)
            audit_record(org=org, action="billing.credits.added", actor=actor, target=reference,
                         data={"amount": amount, "reason": reason})
    except IntegrityError:
        return False
    return True


def usage_summary(*, org: Organization, days: int) -> dict:
    """Daily counts per product over `days` UTC days (today first), today's remaining quota, credits."""
    window = metering.usage_window(days)
    rows = ProductUsage.objects.filter(org=org, day__gte=window[-1]).values("day", "product", "count", "credits_used")
    by_day = {day: {product: 0 for product in PRODUCTS} | {"credits_used": 0} for day in window}
    for row in rows:
        entry = by_day.get(row["day"])
        if entry is not None:
            entry[row["product"]] = entry.get(row["product"], 0) + row["count"]
            entry["credits_used"] += row["credits_used"]
    now = clock.now()
    subject = metering.subject_of(org, "")
    used = dict(Allowance.objects.filter(subject=subject, day=now.date()).values_list("meter", "used"))
    quota = {}
    for name, meter in metering.METERS.items():
        limit = meter.daily_limit(org)
        quota[name] = {"limit": limit, "used": used.get(name, 0), "remaining": max(0, limit - used.get(name, 0))}
        if meter.burst:
            quota[name]["per_minute_limit"] = meter.per_minute_limit(org)
    return {
        "plan": org.plan,
        "atlas_tier": org.atlas_tier,
        "days": [{"date": day.isoformat(), **by_day[day]} for day in window],
        "today": quota,
        "resets_at": clock.next_utc_midnight(now).isoformat(),
        "credits": {"balance": credit_balance(org)},
    }
