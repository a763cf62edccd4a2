"""Tower's review console: the queue of held actions (approve executes, decline refuses, both through
tower.services with a receipt, an audit event and a webhook), the policy rules an operator edits,
agents and receipts read-only, and the mock ERP's orders."""

import json

from django.contrib import admin, messages
from django.utils.html import format_html

from core.errors import ApiError
from tower import services
from tower.models import (
    Action,
    Agent,
    LegacyCustomer,
    LegacyOrder,
    LegacyOrderLine,
    LegacyProduct,
    PolicyRule,
    Receipt,
    ReviewQueueItem,
)


def _pretty(value) -> str:
    return format_html("<pre style='white-space:pre-wrap;margin:0'>{}</pre>", json.dumps(value, indent=2, ensure_ascii=False))


def _reviewer(request) -> str:
    return request.user.get_username() or f"staff:{request.user.pk}"


def _review(modeladmin, request, queryset, *, approve: bool) -> None:
    done = 0
    for action in queryset:
        try:
            result = services.action_review(action_id=action.pk, approve=approve, reviewer=_reviewer(request))
        except ApiError as exc:
            modeladmin.message_user(request, f"{action.pk}: {exc.message}", messages.WARNING)
            continue
        done += 1
        if approve and result.state == Action.FAILED:
            modeladmin.message_user(request, f"{action.pk} was approved but the ERP refused it: {result.error}", messages.WARNING)
    verb = "approved" if approve else "declined"
    modeladmin.message_user(request, f"{done} action(s) {verb}.", messages.SUCCESS if done else messages.INFO)


@admin.action(description="Approve and execute the selected actions")
def approve_actions(modeladmin, request, queryset):
    _review(modeladmin, request, queryset, approve=True)


@admin.action(description="Decline the selected actions")
def decline_actions(modeladmin, request, queryset):
    _review(modeladmin, request, queryset, approve=False)


class ActionAdminBase(admin.ModelAdmin):
    list_display = ["id", "created_at", "org", "agent_name", "operation", "decision", "state", "reasons_text"]
    list_filter = ["state", "decision", "operation"]
    search_fields = ["id", "agent_name", "operation", "org__name"]
    readonly_fields = ["id", "org", "agent", "agent_name", "operation", "input_pretty", "decision", "reasons_pretty",
                       "facts_pretty", "state", "result_pretty", "error", "reviewer", "review_note", "reviewed_at",
                       "compensation_pretty", "compensated_at", "idempotency_key", "created_at", "updated_at", "receipt_list"]
    fields = readonly_fields
    actions = [approve_actions, decline_actions]

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.display(description="reasons")
    def reasons_text(self, obj):
        return "; ".join(r.get("message", "") for r in obj.reasons)

    @admin.display(description="input")
    def input_pretty(self, obj):
        return _pretty(obj.input)

    @admin.display(description="reasons")
    def reasons_pretty(self, obj):
        return _pretty(obj.reasons)

    @admin.display(description="facts")
    def facts_pretty(self, obj):
        return _pretty(obj.facts)

    @admin.display(description="result")
    def result_pretty(self, obj):
        return _pretty(obj.result)

    @admin.display(description="compensation")
    def compensation_pretty(self, obj):
        return _pretty(obj.compensation)

    @admin.display(description="receipts")
    def receipt_list(self, obj):
        return ", ".join(f"#{r.sequence} {r.kind}" for r in obj.receipts.order_by("sequence"))


@admin.register(ReviewQueueItem)
class ReviewQueueAdmin(ActionAdminBase):
    """Actions held for review, oldest first."""

    list_filter = ["decision", "operation"]
    ordering = ["created_at"]

    def get_queryset(self, request):
        return super().get_queryset(request).filter(state=Action.PENDING_REVIEW)


@admin.register(Action)
class ActionAdmin(ActionAdminBase):
    pass


@admin.register(PolicyRule)
class PolicyRuleAdmin(admin.ModelAdmin):
    list_display = ["name", "org", "operation", "fact", "comparator", "value", "decision", "enabled", "message"]
    list_editable = ["enabled"]
    list_filter = ["decision", "operation", "enabled"]
    search_fields = ["name", "operation", "org__name"]


@admin.register(Agent)
class AgentAdmin(admin.ModelAdmin):
    list_display = ["name", "prefix", "org", "scopes", "is_active", "created_at", "last_used_at"]
    list_filter = ["is_active"]
    search_fields = ["name", "prefix", "org__name"]
    fields = ["org", "name", "scopes", "prefix", "is_active", "created_at", "last_used_at", "revoked_at"]
    readonly_fields = fields

    def has_add_permission(self, request):
        return False  # agents are created through the API, where the key is shown once


@admin.register(Receipt)
class ReceiptAdmin(admin.ModelAdmin):
    list_display = ["sequence", "org", "kind", "action", "created_at", "hash"]
    list_filter = ["kind"]
    search_fields = ["id", "action__id", "org__name"]
    fields = ["id", "org", "sequence", "kind", "action", "created_at", "prev_hash", "hash", "key_id", "signature", "body"]
    readonly_fields = fields

    @admin.display(description="body")
    def body(self, obj):
        return _pretty(json.loads(bytes(obj.payload)))

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return request.method in ("GET", "HEAD")

    def has_delete_permission(self, request, obj=None):
        return False


class LegacyOrderLineInline(admin.TabularInline):
    model = LegacyOrderLine
    extra = 0


@admin.register(LegacyOrder)
class LegacyOrderAdmin(admin.ModelAdmin):
    list_display = ["number", "org", "customer", "status", "reference", "created_at"]
    list_filter = ["status"]
    search_fields = ["number", "reference", "customer__name"]
    inlines = [LegacyOrderLineInline]


@admin.register(LegacyCustomer)
class LegacyCustomerAdmin(admin.ModelAdmin):
    list_display = ["number", "name", "email", "credit_hold", "org"]
    search_fields = ["number", "name", "email"]


@admin.register(LegacyProduct)
class LegacyProductAdmin(admin.ModelAdmin):
    list_display = ["sku", "name", "price", "stock", "org"]
    search_fields = ["sku", "name"]
