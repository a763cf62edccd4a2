"""The review console for Atlas: registry entries operators edit, findings they record, registrations they review."""

from django.contrib import admin, messages

from atlas import services
from atlas.models import Agent, Dataset, Finding, IpRangeList, KeyDirectory, Registration, Sighting
from atlas.registry import registry_changed
from core.errors import ApiError


class FindingInline(admin.StackedInline):
    model = Finding
    extra = 0
    fields = ["title", "detail", "source_url", "observed_on", "recorded_by"]


@admin.register(Agent)
class AgentAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "operator", "purpose", "kind", "verification", "locked", "updated_at"]
    list_filter = ["purpose", "kind", "verification", "locked"]
    search_fields = ["name", "slug", "operator", "user_agents"]
    readonly_fields = ["registration", "created_at", "updated_at"]
    inlines = [FindingInline]

    def save_model(self, request, obj, form, change):
        obj.locked = True  # an operator's edit survives the next seed refresh
        obj.sources = [*obj.sources, {"source": "operator", "title": f"Edited by {request.user}", "fields": list(form.changed_data)}]
        super().save_model(request, obj, form, change)
        registry_changed()

    def delete_model(self, request, obj):
        super().delete_model(request, obj)
        registry_changed()


@admin.register(Finding)
class FindingAdmin(admin.ModelAdmin):
    list_display = ["title", "agent", "observed_on", "recorded_by", "created_at"]
    search_fields = ["title", "agent__name"]

    def save_model(self, request, obj, form, change):
        obj.recorded_by = obj.recorded_by or str(request.user)
        super().save_model(request, obj, form, change)


@admin.register(Registration)
class RegistrationAdmin(admin.ModelAdmin):
    list_display = ["id", "name", "operator", "domain", "status", "org", "created_at"]
    list_filter = ["status", "purpose"]
    search_fields = ["id", "name", "operator", "domain"]
    readonly_fields = ["id", "org", "status", "proof_value", "proof_method", "key_directory_ok", "created_at",
                       "updated_at", "verified_at"]
    actions = ["approve", "reject"]

    @admin.action(description="Approve: publish the held registrations")
    def approve(self, request, queryset):
        for registration in queryset:
            try:
                services.registration_approve(registration=registration, reviewer=str(request.user))
                self.message_user(request, f"{registration.id} published.")
            except ApiError as exc:
                self.message_user(request, f"{registration.id}: {exc.message}", level=messages.ERROR)

    @admin.action(description="Reject the held registrations")
    def reject(self, request, queryset):
        for registration in queryset:
            try:
                services.registration_reject(registration=registration, reviewer=str(request.user))
                self.message_user(request, f"{registration.id} rejected.")
            except ApiError as exc:
                self.message_user(request, f"{registration.id}: {exc.message}", level=messages.ERROR)


@admin.register(IpRangeList)
class IpRangeListAdmin(admin.ModelAdmin):
    list_display = ["id", "operator", "upstream_url", "creation_time", "fetched_at", "origin", "last_error"]
    readonly_fields = ["prefixes"]


admin.site.register(KeyDirectory, list_display=["url", "fetched_at", "fresh_until", "last_error"])
admin.site.register(Sighting, list_display=["day", "agent_slug", "requests", "verified", "failed"])
admin.site.register(Dataset, list_display=["id", "tier", "rows", "built_at"])
