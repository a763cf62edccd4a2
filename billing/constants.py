"""The plan catalog, Atlas tiers and credit packs (spec part 8)."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Plan:
    id: str
    name: str
    price_monthly_usd: int
    daily_eval_limit: int
    per_minute_limit: int
    description: str
    purchasable: bool


@dataclass(frozen=True)
class AtlasTier:
    id: str
    name: str
    price_monthly_usd: int
    daily_lookup_limit: int
    full_registry: bool
    downloads: bool
    internal_redistribution: bool
    description: str
    purchasable: bool


@dataclass(frozen=True)
class CreditPack:
    id: str
    credits: int
    price_usd: int


PLANS = {
    plan.id: plan
    for plan in [
        Plan("free", "Free", 0, 250, 30, "250 evaluations a day, 30 a minute. For trying the service and small agents.", False),
        Plan("starter", "Starter", 29, 5_000, 120, "5,000 evaluations a day, 120 a minute.", True),
        Plan("growth", "Growth", 99, 25_000, 300, "25,000 evaluations a day, 300 a minute.", True),
        Plan("scale", "Scale", 299, 100_000, 600, "100,000 evaluations a day, 600 a minute.", True),
    ]
}

ATLAS_TIERS = {
    tier.id: tier
    for tier in [
        AtlasTier("free", "Free", 0, 100, False, False, False, "Public registry fields, 100 lookups a day with a key.", False),
        AtlasTier("pro", "Pro", 49, 10_000, True, True, False, "Full registry, datasets and reports, updated monthly; 10,000 lookups a day.", True),
        AtlasTier("team", "Team", 199, 100_000, True, True, True, "Pro plus an internal redistribution license; 100,000 lookups a day.", True),
    ]
}

CREDIT_PACKS = {
    pack.id: pack
    for pack in [CreditPack("small", 10_000, 19), CreditPack("medium", 100_000, 149), CreditPack("large", 1_000_000, 999)]
}

# Callers without a key, per client address.
KEYLESS_DAILY_EVALUATIONS = 10
KEYLESS_PER_MINUTE = 10
KEYLESS_DAILY_LOOKUPS = 10
KEYLESS_MAX_INPUT_CHARS = 2_000

USAGE_DAYS_MAX = 90
