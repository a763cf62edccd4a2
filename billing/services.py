"""Billing operations: the catalog, usage, credit grants, and payments through Stripe."""

import json
import logging
import time
from dataclasses import asdict
from datetime import UTC, datetime

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import F

from accounts.models import Organization
from accounts.services import audit_record
from accounts.webhooks import webhook_emit
from billing import constants, metering, stripe_api
from billing.models import Allowance, CreditBalance, CreditEntry, ProductUsage, StripeCustomer, StripeEvent, Subscription
from billing.signals import payment_failed, payment_succeeded
from core import clock
from core.errors import BadGateway, BadRequest, Conflict, PaymentRequired, ServiceUnavailable

log = logging.getLogger(__name__)

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


# Payments (Stripe): checkout, subscribe, switch, cancel, portal, credit packs, one-time payments, events.
#
# Stripe is the source of truth; Subscription rows mirror it from the API's answers and from webhook
# events, and the organization's `plan` / `atlas_tier` follow the live subscription of each product.

SUBSCRIBED_PRODUCTS = {
    "plan": {plan_id for plan_id, plan in constants.PLANS.items() if plan.purchasable},
    "atlas": {tier_id for tier_id, tier in constants.ATLAS_TIERS.items() if tier.purchasable},
    "tower": {"tower"},
}
_PRODUCT_NAMES = {"plan": "evaluation plan", "atlas": "Atlas tier", "tower": "Tower subscription"}
CHECKOUT_EXPIRES_SECONDS = 24 * 3600


def _price_key(product: str, plan: str) -> str:
    return plan if product == "plan" else (product if product == plan else f"{product}_{plan}")


def _price_id(product: str, plan: str) -> str:
    price = settings.STRIPE_PRICES.get(_price_key(product, plan))
    if not price:
        raise ServiceUnavailable(f"No Stripe price is configured for the {_PRODUCT_NAMES[product]} {plan}.")
    return price


def _plan_of_price(price_id: str) -> tuple[str, str] | None:
    """(product, plan) for a configured Price id."""
    for key, value in settings.STRIPE_PRICES.items():
        if value == price_id:
            if key in SUBSCRIBED_PRODUCTS["plan"]:
                return "plan", key
            if key == "tower":
                return "tower", "tower"
            product, _, plan = key.partition("_")
            if product == "atlas" and plan in SUBSCRIBED_PRODUCTS["atlas"]:
                return "atlas", plan
    return None


def _check_plan(product: str, plan: str) -> None:
    if product not in SUBSCRIBED_PRODUCTS:
        raise ValueError(f"unknown product {product!r}")
    if plan not in SUBSCRIBED_PRODUCTS[product]:
        choices = ", ".join(sorted(SUBSCRIBED_PRODUCTS[product]))
        raise BadRequest(f"plan must be one of {choices}, not {plan!r}.")


def _stripe_error(exc: Exception, doing: str):
    """The domain error for a Stripe failure: a rejected card is 402, anything else 502."""
    import stripe

    if isinstance(exc, stripe.CardError):
        return PaymentRequired(f"The payment method was rejected: {exc.user_message or 'card declined'}".rstrip(".") + ".")
    if isinstance(exc, stripe.InvalidRequestError) and (exc.param or "").startswith("payment_method"):
        return PaymentRequired(f"The payment method was rejected: {exc.user_message or 'invalid payment method'}".rstrip(".") + ".")
    log.warning("stripe failed while %s: %s", doing, exc)
    return BadGateway(f"The payment processor failed while {doing}; try again.")


def _call(doing: str, fn, *args, **kwargs):
    import stripe

    try:
        return stripe_api.plain(fn(*args, **kwargs))
    except stripe.StripeError as exc:
        raise _stripe_error(exc, doing) from exc


def _customer_id(org: Organization) -> str:
    """The org's Stripe customer, created on first use."""
    existing = StripeCustomer.objects.filter(org=org).values_list("customer_id", flat=True).first()
    if existing:
        return existing
    client = stripe_api.client()
    customer = _call("creating the customer", client.v1.customers.create,
                     {"name": org.name[:200], "metadata": {"org_id": str(org.pk)}},
                     {"idempotency_key": f"customer-{org.pk}"})
    StripeCustomer.objects.get_or_create(org=org, defaults={"customer_id": customer["id"]})
    return StripeCustomer.objects.get(org=org).customer_id


def subscription_current(*, org: Organization, product: str) -> Subscription | None:
    """The organization's live subscription (active, trialing or past due) to a product line, if any."""
    return (Subscription.objects.filter(org=org, product=product, status__in=Subscription.LIVE_STATUSES)
            .order_by("-synced_at", "-created_at").first())


def _ts(value) -> datetime | None:
    return datetime.fromtimestamp(int(value), tz=UTC) if value else None


def _period_end(data: dict) -> int | None:
    if data.get("current_period_end"):
        return data["current_period_end"]
    items = (data.get("items") or {}).get("data") or []
    return items[0].get("current_period_end") if items else None


def _subscription_mirror(data: dict, *, synced_at: int, org: Organization | None = None) -> Subscription | None:
    """Store Stripe's view of a subscription unless a newer one is already stored; then the org follows it."""
    items = (data.get("items") or {}).get("data") or []
    price = ((items[0].get("price") or {}).get("id") if items else None) or ""
    metadata = data.get("metadata") or {}
    product_plan = _plan_of_price(price) or ((metadata.get("product"), metadata.get("plan")) if metadata.get("product") else None)
    if org is None:
        customer = data.get("customer")
        customer = customer.get("id") if isinstance(customer, dict) else customer
        holder = StripeCustomer.objects.filter(customer_id=customer).select_related("org").first()
        org = holder.org if holder else Organization.objects.filter(pk=metadata.get("org_id") or None).first()
    if org is None or product_plan is None or product_plan[0] not in SUBSCRIBED_PRODUCTS:
        return None
    product, plan = product_plan
    fields = {
        "org": org, "product": product, "plan": plan, "status": data.get("status") or "incomplete",
        "cancel_at_period_end": bool(data.get("cancel_at_period_end")),
        "current_period_end": _ts(_period_end(data)), "cancels_at": _ts(data.get("cancel_at")), "synced_at": synced_at,
    }
    with transaction.atomic():
        row, created = Subscription.objects.select_for_update().get_or_create(subscription_id=data["id"], defaults=fields)
        was_live = False if created else row.is_live
        if not created:
            if synced_at < row.synced_at:
                return row  # an older state arriving late: what is stored is newer
            before = (row.status, row.plan, row.cancel_at_period_end)
            for name, value in fields.items():
                setattr(row, name, value)
            row.save()
            if before[2] is False and row.cancel_at_period_end and row.is_live:
                _announce_cancel(row)
            if before[0] != row.status and row.status == "canceled":
                _announce_cancel(row)
        _entitlement_apply(org, product, was_live=was_live, is_live=row.is_live)
    return row


def _announce_cancel(row: Subscription) -> None:
    data = {"product": row.product, "plan": row.plan, "status": row.status,
            "cancels_at": (row.cancels_at or row.current_period_end).isoformat() if (row.cancels_at or row.current_period_end) else None}
    audit_record(org=row.org, action="billing.subscription.canceled", actor="stripe", target=row.subscription_id, data=data)
    webhook_emit(org=row.org, type="billing.subscription.canceled", data=data)


def _entitlement_apply(org: Organization, product: str, *, was_live: bool, is_live: bool) -> None:
    """Set the organization's plan or Atlas tier from its live subscription (free without one);
    Tower has no column: its subscription's coming and going is announced instead."""
    live = subscription_current(org=org, product=product)
    field = {"plan": "plan", "atlas": "atlas_tier"}.get(product)
    if field is None:
        if was_live == is_live:
            return
        data = {"product": product, "plan": "tower" if live else "none", "previous": "none" if live else "tower"}
    else:
        plan = live.plan if live else "free"
        locked = Organization.objects.select_for_update().get(pk=org.pk)
        previous = getattr(locked, field)
        if previous == plan:
            return
        setattr(locked, field, plan)
        locked.save(update_fields=[field])
        setattr(org, field, plan)
        data = {"product": product, "plan": plan, "previous": previous}
    audit_record(org=org, action="billing.plan.changed", actor="stripe", target=product, data=data)
    webhook_emit(org=org, type="billing.plan.changed", data=data)


def _subscription_summary(row: Subscription | None) -> dict | None:
    if row is None:
        return None
    return {
        "id": row.subscription_id, "product": row.product, "plan": row.plan, "status": row.status,
        "cancel_at_period_end": row.cancel_at_period_end,
        "current_period_end": row.current_period_end.isoformat() if row.current_period_end else None,
        "cancels_at": row.cancels_at.isoformat() if row.cancels_at else None,
    }


def billing_status(*, org: Organization) -> dict:
    """Current plan and limits, and the state of each subscription."""
    plan = constants.PLANS.get(org.plan, constants.PLANS["free"])
    current = subscription_current(org=org, product="plan")
    return {
        "billing_enabled": settings.BILLING_ENABLED,
        "plan": plan.id,
        "daily_eval_limit": plan.daily_eval_limit,
        "per_minute_limit": plan.per_minute_limit,
        "subscription": _subscription_summary(current),
        "subscription_status": current.status if current else "none",
        "atlas_tier": org.atlas_tier,
        "atlas_subscription": _subscription_summary(subscription_current(org=org, product="atlas")),
        "tower_subscription": _subscription_summary(subscription_current(org=org, product="tower")),
        "credits": {"balance": credit_balance(org)},
    }


def _return_url(url: str | None) -> str:
    return url or settings.BILLING_RETURN_URL


def checkout_create(*, org: Organization, product: str = "plan", plan: str, success_url: str | None = None,
                    cancel_url: str | None = None, switch: bool = False) -> dict:
    """A Stripe Checkout page that starts a subscription to `plan` of `product` ("plan", "atlas", "tower").

    409 when already on that plan; with a live subscription to another plan of the product, 409 too,
    unless `switch` (Atlas switches tiers in place): then the subscription is switched, prorated, and
    the answer is subscription_switch's (no `url`, `switched` true).
    """
    _check_plan(product, plan)
    client = stripe_api.client()
    live = subscription_current(org=org, product=product)
    if live is not None and live.plan == plan:
        raise Conflict(f"The organization is already on the {_PRODUCT_NAMES[product]} {plan}.")
    if live is not None and not switch:
        raise Conflict(f"The organization already has a {_PRODUCT_NAMES[product]} ({live.plan}); switch it with subscribe.")
    if live is not None:
        return subscription_switch(org=org, product=product, plan=plan)
    price = _price_id(product, plan)
    customer = _customer_id(org)
    metadata = {"org_id": str(org.pk), "product": product, "plan": plan}
    session = _call("creating the checkout", client.v1.checkout.sessions.create, {
        "mode": "subscription",
        "customer": customer,
        "client_reference_id": str(org.pk),
        "line_items": [{"price": price, "quantity": 1}],
        "success_url": _return_url(success_url),
        "cancel_url": _return_url(cancel_url),
        "metadata": metadata,
        "subscription_data": {"metadata": metadata},
        "expires_at": int(clock.now().timestamp()) + CHECKOUT_EXPIRES_SECONDS,
    })
    audit_record(org=org, action="billing.checkout.created", target=session["id"], data={"product": product, "plan": plan})
    expires = max(0, int(session.get("expires_at") or 0) - int(clock.now().timestamp()))
    return {"url": session["url"], "plan": plan, "product": product, "expires_in_seconds": expires, "switched": False}


def subscription_switch(*, org: Organization, product: str, plan: str) -> dict:
    """Move the live subscription of `product` to another plan, prorated; 409 without one or on the plan."""
    _check_plan(product, plan)
    client = stripe_api.client()
    live = subscription_current(org=org, product=product)
    if live is None:
        raise Conflict(f"The organization has no active {_PRODUCT_NAMES[product]} to switch.")
    if live.plan == plan:
        raise Conflict(f"The organization is already on the {_PRODUCT_NAMES[product]} {plan}.")
    price = _price_id(product, plan)
    current = _call("reading the subscription", client.v1.subscriptions.retrieve, live.subscription_id)
    item = ((current.get("items") or {}).get("data") or [{}])[0].get("id")
    updated = _call("switching the plan", client.v1.subscriptions.update, live.subscription_id, {
        "items": [{"id": item, "price": price}],
        "proration_behavior": "create_prorations",
        "cancel_at_period_end": False,
        "metadata": {"org_id": str(org.pk), "product": product, "plan": plan},
    })
    row = _subscription_mirror(updated, synced_at=int(time.time()), org=org)
    audit_record(org=org, action="billing.subscription.switched", target=live.subscription_id,
                 data={"product": product, "from": live.plan, "to": plan})
    return {"plan": plan, "product": product, "switched": True, "status": row.status if row else updated.get("status"),
            "subscription": _subscription_summary(row)}


def subscription_subscribe(*, org: Organization, plan: str, payment_method: str | None = None, product: str = "plan") -> dict:
    """Subscribe with a saved payment method (`pm_...`), or switch a live subscription (prorated).

    Answers `outcome`: "active" (201), "requires_action" with `payment_url` (202: the customer must
    authenticate the first payment there), or "switched" (200). A rejected card is 402 and leaves no
    subscription behind.
    """
    _check_plan(product, plan)
    client = stripe_api.client()
    live = subscription_current(org=org, product=product)
    if live is not None:
        return {"outcome": "switched", **subscription_switch(org=org, product=product, plan=plan)}
    if not payment_method:
        raise BadRequest("payment_method: a payment method (pm_...) is required for a new subscription.")
    price = _price_id(product, plan)
    customer = _customer_id(org)
    _call("attaching the payment method", client.v1.payment_methods.attach, payment_method, {"customer": customer})
    _call("saving the payment method", client.v1.customers.update, customer,
          {"invoice_settings": {"default_payment_method": payment_method}})
    metadata = {"org_id": str(org.pk), "product": product, "plan": plan}
    created = _call("creating the subscription", client.v1.subscriptions.create, {
        "customer": customer,
        "items": [{"price": price}],
        "default_payment_method": payment_method,
        "payment_behavior": "allow_incomplete",
        "metadata": metadata,
        "expand": ["latest_invoice"],
    })
    status = created.get("status")
    invoice = created.get("latest_invoice") or {}
    if status in ("active", "trialing"):
        row = _subscription_mirror(created, synced_at=int(time.time()), org=org)
        audit_record(org=org, action="billing.subscription.created", target=created["id"], data={"product": product, "plan": plan})
        return {"outcome": "active", "plan": plan, "product": product, "status": status, "subscription": _subscription_summary(row)}
    intent = _invoice_payment_intent(client, invoice.get("id")) if invoice.get("id") else {}
    if status == "incomplete" and intent.get("status") == "requires_action":
        row = _subscription_mirror(created, synced_at=int(time.time()), org=org)
        audit_record(org=org, action="billing.subscription.requires_action", target=created["id"], data={"product": product, "plan": plan})
        return {"outcome": "requires_action", "plan": plan, "product": product, "status": status,
                "payment_url": invoice.get("hosted_invoice_url"), "subscription": _subscription_summary(row)}
    # Declined (requires_payment_method) or anything else: nothing may stay behind.
    try:
        client.v1.subscriptions.cancel(created["id"])
    except Exception:  # noqa: BLE001 - an incomplete subscription expires on its own after 23 hours
        log.warning("could not cancel incomplete subscription %s", created["id"])
    error = (intent.get("last_payment_error") or {}).get("message") or "the first payment failed"
    raise PaymentRequired(f"The payment method was rejected: {error}".rstrip(".") + ".")


def _invoice_payment_intent(client, invoice_id: str) -> dict:
    payments = _call("reading the invoice's payment", client.v1.invoice_payments.list,
                     {"invoice": invoice_id, "expand": ["data.payment.payment_intent"]})
    for payment in payments.get("data") or []:
        intent = (payment.get("payment") or {}).get("payment_intent")
        if isinstance(intent, dict):
            return intent
    return {}


def subscription_cancel(*, org: Organization, product: str = "plan") -> dict:
    """Schedule the live subscription of `product` to end with its period; 409 when there is none
    (or it is already scheduled to end)."""
    if product not in SUBSCRIBED_PRODUCTS:
        raise ValueError(f"unknown product {product!r}")
    client = stripe_api.client()
    live = subscription_current(org=org, product=product)
    if live is None or live.cancel_at_period_end:
        raise Conflict(f"The organization has no active {_PRODUCT_NAMES[product]} to cancel.")
    updated = _call("canceling the subscription", client.v1.subscriptions.update, live.subscription_id,
                    {"cancel_at_period_end": True})
    row = _subscription_mirror(updated, synced_at=int(time.time()), org=org) or live
    ends = row.cancels_at or row.current_period_end
    return {"plan": row.plan, "product": product, "cancels_at": ends.isoformat() if ends else None,
            "subscription_status": row.status}


def subscriptions_cancel_now(*, org: Organization) -> bool:
    """End every live subscription of the organization at once (before it is deleted).

    True when one was canceled. Raises BadGateway when Stripe could not cancel one: the caller must
    then delete nothing.
    """
    rows = list(Subscription.objects.filter(org=org, status__in=(*Subscription.LIVE_STATUSES, "incomplete")))
    if not rows:
        return False
    if not settings.BILLING_ENABLED:
        raise BadGateway("The subscription could not be canceled: billing is not configured; nothing was deleted.")
    client = stripe_api.client()
    import stripe

    for row in rows:
        try:
            client.v1.subscriptions.cancel(row.subscription_id)
        except stripe.InvalidRequestError as exc:
            if exc.code != "resource_missing":
                raise BadGateway("The subscription could not be canceled; nothing was deleted.") from exc
        except stripe.StripeError as exc:
            raise BadGateway("The subscription could not be canceled; nothing was deleted.") from exc
    return True


def portal_create(*, org: Organization, return_url: str | None = None) -> dict:
    """A Stripe customer portal session: payment methods, invoices, plan changes, cancellation."""
    client = stripe_api.client()
    session = _call("opening the portal", client.v1.billing_portal.sessions.create,
                    {"customer": _customer_id(org), "return_url": return_url or settings.BILLING_RETURN_URL})
    audit_record(org=org, action="billing.portal.opened", target=session.get("id", ""))
    return {"url": session["url"]}


def credits_checkout_create(*, org: Organization, pack: str, success_url: str | None = None, cancel_url: str | None = None) -> dict:
    """A one-time Checkout for a prepaid credit pack, by card or stablecoin (USDC); the credits land
    when Stripe reports the payment (checkout.session.completed or async_payment_succeeded)."""
    if pack not in constants.CREDIT_PACKS:
        raise BadRequest(f"pack must be one of {', '.join(constants.CREDIT_PACKS)}, not {pack!r}.")
    chosen = constants.CREDIT_PACKS[pack]
    result = payment_checkout_create(
        org=org, kind="credits", reference=pack, amount_cents=chosen.price_usd * 100,
        description=f"{chosen.credits:,} prepaid evaluation credits ({pack} pack)",
        success_url=success_url, cancel_url=cancel_url, methods=("card", "crypto"),
        metadata={"pack": pack, "credits": str(chosen.credits)},
    )
    return {**result, "pack": pack, "credits": chosen.credits, "price_usd": chosen.price_usd}


def payment_checkout_create(*, kind: str, reference: str, amount_cents: int, description: str, org: Organization | None = None,
                            success_url: str | None = None, cancel_url: str | None = None,
                            methods: tuple[str, ...] = ("card",), metadata: dict | None = None) -> dict:
    """A one-time Stripe Checkout (mode payment) for `amount_cents` USD.

    When it is paid, billing sends `billing.signals.payment_succeeded(kind=, reference=, org=, ...)` once
    (credit packs are handled here). Beacon's $5 check: kind="beacon", reference=<check id>.
    Answers {url, id, expires_in_seconds}.
    """
    client = stripe_api.client()
    meta = {"kind": kind, "reference": reference, **({"org_id": str(org.pk)} if org else {}), **(metadata or {})}
    params = {
        "mode": "payment",
        "line_items": [{"quantity": 1, "price_data": {"currency": "usd", "unit_amount": amount_cents,
                                                      "product_data": {"name": description[:250]}}}],
        "payment_method_types": list(methods),
        "success_url": _return_url(success_url),
        "cancel_url": _return_url(cancel_url),
        "metadata": meta,
        "payment_intent_data": {"metadata": meta},
        "expires_at": int(clock.now().timestamp()) + CHECKOUT_EXPIRES_SECONDS,
    }
    if org is not None:
        params["customer"] = _customer_id(org)
        params["client_reference_id"] = str(org.pk)
    session = _call("creating the checkout", client.v1.checkout.sessions.create, params)
    if org is not None:
        audit_record(org=org, action="billing.checkout.created", target=session["id"], data={"kind": kind, "reference": reference})
    expires = max(0, int(session.get("expires_at") or 0) - int(clock.now().timestamp()))
    return {"url": session["url"], "id": session["id"], "expires_in_seconds": expires}


# Stripe webhook events.


def stripe_event_receive(*, payload: bytes, signature: str | None) -> dict:
    """Verify a Stripe event with the SDK's signature scheme and apply it once.

    400 on a bad signature or body; a replayed event id is acknowledged and changes nothing.
    """
    import stripe

    if not settings.BILLING_ENABLED or not settings.STRIPE_WEBHOOK_SECRET:
        raise ServiceUnavailable("Billing is not enabled on this service.")
    try:
        stripe.WebhookSignature.verify_header(payload, signature, settings.STRIPE_WEBHOOK_SECRET, 300)
    except stripe.SignatureVerificationError as exc:
        raise BadRequest("Stripe-Signature does not verify.") from exc
    try:
        event = json.loads(payload)
        event_id, event_type, created = event["id"], event["type"], int(event["created"])
        obj = event["data"]["object"]
    except (ValueError, KeyError, TypeError) as exc:
        raise BadRequest("The body is not a Stripe event.") from exc
    with transaction.atomic():
        try:
            with transaction.atomic():
                record = StripeEvent.objects.create(id=event_id, type=event_type, created=created)
        except IntegrityError:
            return {"received": True, "duplicate": True}
        outcome, org = _event_apply(event_type, obj, created)
        record.outcome, record.org = outcome[:200], org
        record.save(update_fields=["outcome", "org"])
    return {"received": True, "duplicate": False, "outcome": outcome}


def _org_of(obj: dict) -> Organization | None:
    metadata = obj.get("metadata") or {}
    org_id = metadata.get("org_id") or obj.get("client_reference_id")
    if org_id:
        try:
            return Organization.objects.filter(pk=org_id).first()
        except (ValueError, ValidationError):
            return None
    customer = obj.get("customer")
    customer = customer.get("id") if isinstance(customer, dict) else customer
    holder = StripeCustomer.objects.filter(customer_id=customer).select_related("org").first() if customer else None
    return holder.org if holder else None


def _event_apply(event_type: str, obj: dict, created: int) -> tuple[str, Organization | None]:
    if event_type.startswith("customer.subscription."):
        row = _subscription_mirror(obj, synced_at=created)
        return (f"subscription {row.product}:{row.plan} {row.status}" if row else "subscription of no known organization"), (row.org if row else None)
    org = _org_of(obj)
    if event_type == "checkout.session.completed":
        if org is not None and obj.get("customer") and not StripeCustomer.objects.filter(org=org).exists():
            StripeCustomer.objects.get_or_create(org=org, defaults={"customer_id": obj["customer"]})
        if obj.get("mode") == "payment" and obj.get("payment_status") in ("paid", "no_payment_required"):
            return _payment_succeeded(obj, org), org
        return "checkout completed", org
    if event_type == "checkout.session.async_payment_succeeded":
        return _payment_succeeded(obj, org), org
    if event_type in ("checkout.session.async_payment_failed", "invoice.payment_failed"):
        if org is not None:
            data = {"object": obj.get("object"), "id": obj.get("id"), "amount": obj.get("amount_total") or obj.get("amount_due"),
                    "currency": obj.get("currency")}
            audit_record(org=org, action="billing.payment.failed", actor="stripe", target=obj.get("id", ""), data=data)
            webhook_emit(org=org, type="billing.payment.failed", data=data)
        metadata = obj.get("metadata") or {}
        if metadata.get("kind") and metadata.get("kind") != "credits":
            payment_failed.send(sender=None, kind=metadata["kind"], reference=metadata.get("reference", ""), org=org,
                                amount_total=obj.get("amount_total"), currency=obj.get("currency"), session_id=obj.get("id"))
        return "payment failed", org
    return "ignored", org


def _payment_succeeded(session: dict, org: Organization | None) -> str:
    metadata = session.get("metadata") or {}
    kind = metadata.get("kind", "")
    if kind == "credits":
        pack = constants.CREDIT_PACKS.get(metadata.get("pack", ""))
        if org is None or pack is None:
            return "credit pack of no known organization"
        if credits_grant(org=org, amount=pack.credits, reason=f"credit pack {pack.id}", reference=session["id"], actor="stripe"):
            webhook_emit(org=org, type="billing.credits.added",
                         data={"amount": pack.credits, "pack": pack.id, "balance": credit_balance(org), "payment": session["id"]})
            return f"credits +{pack.credits}"
        return "credits already added"
    payment_succeeded.send(sender=None, kind=kind, reference=metadata.get("reference", ""), org=org,
                           amount_total=session.get("amount_total"), currency=session.get("currency"), session_id=session["id"])
    return f"paid {kind} {metadata.get('reference', '')}".strip()
