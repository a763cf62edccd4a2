"""Credits and usage in the review console (read-mostly: balances change through services)."""

from django.contrib import admin

from billing.models import Allowance, CreditBalance, CreditEntry, ProductUsage, StripeEvent, Subscription, X402Payment


@admin.register(CreditBalance)
class CreditBalanceAdmin(admin.ModelAdmin):
    list_display = ["org", "balance"]
    search_fields = ["org__name"]
    readonly_fields = ["org", "balance"]


@admin.register(CreditEntry)
class CreditEntryAdmin(admin.ModelAdmin):
    list_display = ["created_at", "org", "amount", "reason", "reference"]
    search_fields = ["org__name", "reference"]
    readonly_fields = ["org", "amount", "reason", "reference", "created_at"]


@admin.register(ProductUsage)
class ProductUsageAdmin(admin.ModelAdmin):
    list_display = ["day", "org", "product", "count", "credits_used"]
    list_filter = ["product"]


@admin.register(Allowance)
class AllowanceAdmin(admin.ModelAdmin):
    list_display = ["day", "subject", "meter", "used"]
    list_filter = ["meter"]


@admin.register(Subscription)
class SubscriptionAdmin(admin.ModelAdmin):
    list_display = ["org", "product", "plan", "status", "cancel_at_period_end", "current_period_end"]
    list_filter = ["product", "status"]
    search_fields = ["org__name", "subscription_id"]
    readonly_fields = [f.name for f in Subscription._meta.fields]


@admin.register(StripeEvent)
class StripeEventAdmin(admin.ModelAdmin):
    list_display = ["received_at", "id", "type", "org", "outcome"]
    search_fields = ["id", "type"]


@admin.register(X402Payment)
class X402PaymentAdmin(admin.ModelAdmin):
    list_display = ["created_at", "route", "amount", "payer", "status", "transaction"]
    list_filter = ["status", "route"]
    search_fields = ["payer", "nonce", "transaction"]
    readonly_fields = [f.name for f in X402Payment._meta.fields]
