"""Read-only views of verdicts and reports for operators (they are signed: nothing here edits them)."""

from django.contrib import admin

from preflight.models import Check, Report


class ReadOnly(admin.ModelAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(Check)
class CheckAdmin(ReadOnly):
    list_display = ("id", "created_at", "decision", "covered", "simulator", "org")
    list_filter = ("decision", "covered", "simulator")
    search_fields = ("id", "digest")


@admin.register(Report)
class ReportAdmin(ReadOnly):
    list_display = ("id", "check_row", "signature", "created_at", "same_transaction", "within_window", "miss", "covered_miss")
    list_filter = ("miss", "covered_miss")
    search_fields = ("id", "signature")
