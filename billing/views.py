"""Billing routes: the catalog and usage, and payments (Stripe checkout, subscriptions, portal, credit packs, events)."""

from django.conf import settings
from django.utils.decorators import method_decorator
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from billing import services
from billing.serializers import (
    BillingOut,
    CancelOut,
    CatalogOut,
    CheckoutIn,
    CheckoutOut,
    CreditsCheckoutIn,
    CreditsCheckoutOut,
    PortalIn,
    PortalOut,
    SubscribeIn,
    SubscribeOut,
    UsageOut,
    UsageQueryIn,
)
from core.api import ApiView
from core.errors import ServiceUnavailable
from core.schema import errors


class PlanListView(ApiView):
    """The plan catalog: evaluation plans, Atlas tiers, credit packs and the keyless limits."""

    auth = "none"

    @extend_schema(tags=["Billing"], responses={200: CatalogOut})
    def get(self, request):
        return Response(services.plans_catalog())


class UsageView(ApiView):
    """Daily usage per product, today's remaining quota per meter, and the credit balance."""

    scope = "evaluate"

    @extend_schema(tags=["Account"], parameters=[UsageQueryIn], responses={200: UsageOut, **errors(400, 401)})
    def get(self, request):
        query = self.validated(UsageQueryIn, request.query_params)
        return Response(services.usage_summary(org=request.org, days=query["days"]))


# Payments (Stripe). Each route validates its input first (400), then needs billing enabled (503).


def _enabled() -> None:
    if not settings.BILLING_ENABLED:
        raise ServiceUnavailable("Billing is not enabled on this service.")


def _actor(request) -> str:
    return request.api_key.prefix if request.api_key else ""


class BillingView(ApiView):
    """The evaluation plan, its limits and subscription, the Atlas and Tower subscriptions, and credits.
    DELETE schedules the plan's subscription to end with the current period."""

    @extend_schema(tags=["Billing"], responses={200: BillingOut, **errors(401, 403)})
    def get(self, request):
        return Response(services.billing_status(org=request.org))

    @extend_schema(tags=["Billing"], request=None, responses={200: CancelOut, **errors(401, 403, 409, 502, 503, s409="No active subscription (or it already ends with the period).")})
    def delete(self, request):
        _enabled()
        return Response(services.subscription_cancel(org=request.org, product="plan"))


class BillingCheckoutView(ApiView):
    """A Stripe Checkout page for a new evaluation plan subscription (starter, growth or scale)."""

    @extend_schema(tags=["Billing"], request=CheckoutIn, responses={201: CheckoutOut, **errors(400, 401, 403, 409, 502, 503, s409="Already subscribed; switch with subscribe.")})
    def post(self, request):
        data = self.validated(CheckoutIn, request.data)
        _enabled()
        result = services.checkout_create(org=request.org, product="plan", **data)
        return Response({key: result[key] for key in ("url", "plan", "expires_in_seconds")}, status=201)


class BillingSubscribeView(ApiView):
    """Subscribe with a saved payment method, or switch plans (prorated). 201 active; 202 the first
    payment needs the payer's authentication at `payment_url`; 200 switched; 402 the card was rejected."""

    @extend_schema(tags=["Billing"], request=SubscribeIn, responses={
        200: SubscribeOut, 201: SubscribeOut, 202: SubscribeOut,
        **errors(400, 401, 402, 403, 409, 502, 503, s402="The payment method was rejected.", s409="Already on the plan."),
    })
    def post(self, request):
        data = self.validated(SubscribeIn, request.data)
        _enabled()
        result = services.subscription_subscribe(org=request.org, plan=data["plan"], payment_method=data.get("payment_method"))
        status = {"active": 201, "requires_action": 202}.get(result["outcome"], 200)
        return Response({key: result[key] for key in ("outcome", "plan", "status", "payment_url", "subscription") if key in result},
                        status=status)


class BillingPortalView(ApiView):
    """A Stripe customer portal session: payment methods, invoices, plan changes, cancellation."""

    @extend_schema(tags=["Billing"], request=PortalIn, responses={200: PortalOut, **errors(400, 401, 403, 502, 503)})
    def post(self, request):
        data = self.validated(PortalIn, request.data)
        _enabled()
        return Response(services.portal_create(org=request.org, return_url=data.get("return_url")))


class CreditsCheckoutView(ApiView):
    """A one-time Stripe Checkout for a prepaid credit pack (small 10,000 for $19, medium 100,000 for
    $149, large 1,000,000 for $999), by card or stablecoin. The credits land once Stripe reports the
    payment, never expire, and are spent after the day's plan allowance."""

    @extend_schema(tags=["Billing"], request=CreditsCheckoutIn, responses={201: CreditsCheckoutOut, **errors(400, 401, 403, 502, 503)})
    def post(self, request):
        data = self.validated(CreditsCheckoutIn, request.data)
        _enabled()
        return Response(services.credits_checkout_create(org=request.org, **data), status=201)


@method_decorator(csrf_exempt, name="dispatch")
class StripeWebhookView(APIView):
    """Stripe's events (signed with Stripe-Signature): subscriptions, checkouts, payments. Each event is
    applied once; the organization's plan, tier and credits follow, audited and forwarded as our events."""

    authentication_classes: list = []
    parser_classes: list = []

    @extend_schema(exclude=True)
    def post(self, request):
        result = services.stripe_event_receive(payload=request.body, signature=request.headers.get("Stripe-Signature"))
        return Response(result)
