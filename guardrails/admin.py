from django.contrib import admin

from guardrails.models import Evaluation, Feedback, RuleSet


@admin.register(RuleSet)
class RuleSetAdmin(admin.ModelAdmin):
    list_display = ["slug", "org", "is_active", "updated_at"]
    list_filter = ["is_active"]


@admin.register(Evaluation)
class EvaluationAdmin(admin.ModelAdmin):
    list_display = ["id", "org", "rule_set", "verdict", "recommended_action", "confidence", "language", "created_at"]
    list_filter = ["verdict", "recommended_action"]


@admin.register(Feedback)
class FeedbackAdmin(admin.ModelAdmin):
    list_display = ["id", "about", "created_at"]
