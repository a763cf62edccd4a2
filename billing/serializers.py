"""Shapes of the billing routes."""

from rest_framework import serializers

from billing import constants


class PlanOut(serializers.Serializer):
    id = serializers.CharField()
    name = serializers.CharField()
    price_monthly_usd = serializers.IntegerField()
    daily_eval_limit = serializers.IntegerField()
    per_minute_limit = serializers.IntegerField()
    description = serializers.CharField()
    purchasable = serializers.BooleanField()


class AtlasTierOut(serializers.Serializer):
    id = serializers.CharField()
    name = serializers.CharField()
    price_monthly_usd = serializers.IntegerField()
    daily_lookup_limit = serializers.IntegerField()
    full_registry = serializers.BooleanField()
    downloads = serializers.BooleanField()
    internal_redistribution = serializers.BooleanField()
    description = serializers.CharField()
    purchasable = serializers.BooleanField()


class CreditPackOut(serializers.Serializer):
    id = serializers.CharField()
    credits = serializers.IntegerField()
    price_usd = serializers.IntegerField()


class KeylessOut(serializers.Serializer):
    daily_evaluations = serializers.IntegerField()
    per_minute = serializers.IntegerField()
    max_input_chars = serializers.IntegerField()
    daily_atlas_lookups = serializers.IntegerField()


class CatalogOut(serializers.Serializer):
    currency = serializers.CharField()
    billing_enabled = serializers.BooleanField()
    plans = PlanOut(many=True)
    atlas_tiers = AtlasTierOut(many=True)
    credit_packs = CreditPackOut(many=True)
    keyless = KeylessOut()


class UsageQueryIn(serializers.Serializer):
    days = serializers.IntegerField(required=False, default=30, min_value=1, max_value=constants.USAGE_DAYS_MAX)


class UsageDayOut(serializers.Serializer):
    date = serializers.DateField()
    guardrails = serializers.IntegerField(help_text="Evaluations (single and batch items).")
    preflight = serializers.IntegerField(help_text="Preflight checks; they count against the evaluation allowance.")
    atlas = serializers.IntegerField(help_text="Atlas lookups.")
    credits_used = serializers.IntegerField()


class QuotaOut(serializers.Serializer):
    limit = serializers.IntegerField()
    used = serializers.IntegerField()
    remaining = serializers.IntegerField()
    per_minute_limit = serializers.IntegerField(required=False)


class UsageOut(serializers.Serializer):
    plan = serializers.CharField()
    atlas_tier = serializers.CharField()
    days = UsageDayOut(many=True, help_text="Newest first, one entry per UTC day.")
    today = serializers.DictField(child=QuotaOut(), help_text="Per meter: `evaluations`, `atlas_lookups`.")
    resets_at = serializers.DateTimeField()
    credits = serializers.DictField(child=serializers.IntegerField())


# Payments.

PAID_PLANS = [plan_id for plan_id, plan in constants.PLANS.items() if plan.purchasable]


class CheckoutIn(serializers.Serializer):
    plan = serializers.ChoiceField(choices=PAID_PLANS)
    success_url = serializers.URLField(required=False, max_length=2000, help_text="Where the payer lands after paying.")
    cancel_url = serializers.URLField(required=False, max_length=2000, help_text="Where the payer lands after leaving.")


class CheckoutOut(serializers.Serializer):
    url = serializers.URLField(help_text="The Stripe Checkout page to send the payer to.")
    plan = serializers.CharField()
    expires_in_seconds = serializers.IntegerField()


class SubscribeIn(serializers.Serializer):
    plan = serializers.ChoiceField(choices=PAID_PLANS)
    payment_method = serializers.RegexField(
        r"^pm_[A-Za-z0-9]+$", required=False, max_length=255,
        help_text="A saved Stripe PaymentMethod (`pm_...`); required for a new subscription, not for a switch.",
    )


class SubscriptionOut(serializers.Serializer):
    id = serializers.CharField()
    product = serializers.CharField(help_text="`plan`, `atlas` or `tower`.")
    plan = serializers.CharField()
    status = serializers.CharField(help_text="Stripe's status: `active`, `trialing`, `past_due`, `incomplete`, `canceled`, ...")
    cancel_at_period_end = serializers.BooleanField()
    current_period_end = serializers.DateTimeField(allow_null=True)
    cancels_at = serializers.DateTimeField(allow_null=True)


class SubscribeOut(serializers.Serializer):
    outcome = serializers.ChoiceField(choices=["active", "requires_action", "switched"])
    plan = serializers.CharField()
    status = serializers.CharField()
    payment_url = serializers.URLField(required=False, help_text="With 202: where the payer authenticates the first payment.")
    subscription = SubscriptionOut(allow_null=True)


class BillingOut(serializers.Serializer):
    billing_enabled = serializers.BooleanField()
    plan = serializers.CharField()
    daily_eval_limit = serializers.IntegerField()
    per_minute_limit = serializers.IntegerField()
    subscription_status = serializers.CharField(help_text="Of the evaluation plan's subscription; `none` without one.")
    subscription = SubscriptionOut(allow_null=True)
    atlas_tier = serializers.CharField()
    atlas_subscription = SubscriptionOut(allow_null=True)
    tower_subscription = SubscriptionOut(allow_null=True)
    credits = serializers.DictField(child=serializers.IntegerField())


class CancelOut(serializers.Serializer):
    plan = serializers.CharField()
    cancels_at = serializers.DateTimeField(allow_null=True)
    subscription_status = serializers.CharField()


class PortalIn(serializers.Serializer):
    return_url = serializers.URLField(required=False, max_length=2000)


class PortalOut(serializers.Serializer):
    url = serializers.URLField()


class CreditsCheckoutIn(serializers.Serializer):
    pack = serializers.ChoiceField(choices=list(constants.CREDIT_PACKS))
    success_url = serializers.URLField(required=False, max_length=2000)
    cancel_url = serializers.URLField(required=False, max_length=2000)


class CreditsCheckoutOut(serializers.Serializer):
    url = serializers.URLField(help_text="The Stripe Checkout page: card or stablecoin (USDC).")
    id = serializers.CharField()
    pack = serializers.CharField()
    credits = serializers.IntegerField()
    price_usd = serializers.IntegerField()
    expires_in_seconds = serializers.IntegerField()


class X402AcceptOut(serializers.Serializer):
    scheme = serializers.CharField(help_text="`exact`.")
    network = serializers.CharField(help_text="CAIP-2: `eip155:8453` is Base (the v1 name `base`).")
    asset = serializers.CharField(help_text="USDC's contract address.")
    amount = serializers.CharField(help_text="Atomic units (USDC has 6 decimals: $0.01 is 10000).")
    payTo = serializers.CharField()
    maxTimeoutSeconds = serializers.IntegerField()
    extra = serializers.DictField(help_text="The asset's EIP-712 domain: `name`, `version`.")


class X402PaymentRequiredOut(serializers.Serializer):
    """The x402 v2 PaymentRequired object (also base64 JSON in the PAYMENT-REQUIRED header), with `error`."""

    error = serializers.CharField(help_text="Why payment is needed or why the payment was refused.")
    x402Version = serializers.IntegerField(required=False)
    resource = serializers.DictField(required=False, help_text="`url`, `description`, `mimeType`.")
    accepts = X402AcceptOut(many=True, required=False)
