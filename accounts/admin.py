"""The review console's account pages: organizations, keys by prefix only, the audit log read-only."""

from django.contrib import admin

from accounts.models import ApiKey, AuditEvent, Organization, WebhookAttempt, WebhookDelivery


class ApiKeyInline(admin.TabularInline):
    model = ApiKey
    fields = ["name", "prefix", "scope", "is_active", "created_at", "last_used_at"]
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Organization)
class OrganizationAdmin(admin.ModelAdmin):
    list_display = ["name", "id", "plan", "owner", "store_inputs", "retention_days", "created_at"]
    search_fields = ["name", "id", "owner__email"]
    list_filter = ["plan", "store_inputs"]
    readonly_fields = ["id", "created_at"]
    inlines = [ApiKeyInline]


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    list_display = ["prefix", "name", "org", "scope", "is_active", "created_at", "last_used_at"]
    list_filter = ["scope", "is_active"]
    search_fields = ["prefix", "name", "org__name"]
    fields = ["org", "name", "prefix", "scope", "is_active", "created_at", "last_used_at", "revoked_at"]
    readonly_fields = fields

    def has_add_permission(self, request):
        return False  # keys are issued through the API, where the key is shown once


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    list_display = ["created_at", "org", "action", "actor", "target", "ip"]
    list_filter = ["action"]
    search_fields = ["org__name", "action", "actor", "target"]
    readonly_fields = ["org", "action", "actor", "target", "data", "ip", "created_at"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class WebhookAttemptInline(admin.TabularInline):
    model = WebhookAttempt
    fields = ["number", "status_code", "error", "duration_ms", "created_at"]
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(admin.ModelAdmin):
    """Deliveries and their attempts, to answer "did they get it?" (secrets are never shown)."""

    list_display = ["created_at", "event", "url", "status", "attempts", "last_status_code", "next_attempt_at"]
    list_filter = ["status"]
    search_fields = ["event__id", "event__org__name", "url"]
    readonly_fields = ["event", "url", "status", "attempts", "next_attempt_at", "locked_until", "last_status_code",
                       "last_error", "created_at", "delivered_at"]
    inlines = [WebhookAttemptInline]

    def has_add_permission(self, request):
        return False
