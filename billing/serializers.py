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
