"""Credits and usage in the review console (read-mostly: balances change through services)."""

from django.contrib import admin

from billing.models import Allowance, CreditBalance, CreditEntry, ProductUsage


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
