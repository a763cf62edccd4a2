"""Guardrails records: custom rule sets, evaluations and feedback."""

from django.db import models

from core.ids import new_id


def _rule_set_id() -> str:
    return new_id("rs_")


def _evaluation_id() -> str:
    return new_id("eval_")


def _feedback_id() -> str:
    return new_id("fb_")


class RuleSet(models.Model):
    """An organization's own rule set; system rule sets live in code (guardrails.engine.rules)."""

    id = models.CharField(primary_key=True, max_length=24, default=_rule_set_id, editable=False)
    org = models.ForeignKey("accounts.Organization", on_delete=models.CASCADE, related_name="rule_sets")
    slug = models.SlugField(max_length=64)
    name = models.CharField(max_length=120, blank=True)
    description = models.CharField(max_length=500, blank=True)
    rules = models.JSONField(default=list)
    is_active = models.BooleanField(default=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["org", "slug"], name="guardrails_rule_set_slug_per_org")]
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug


class Evaluation(models.Model):
    """One evaluation: verdicts, scores and metadata always; the input and context only when the
    organization's `store_inputs` is true. Deleted after the organization's retention_days."""

    id = models.CharField(primary_key=True, max_length=24, default=_evaluation_id, editable=False)
    org = models.ForeignKey("accounts.Organization", on_delete=models.CASCADE, related_name="evaluations")
    rule_set = models.CharField(max_length=64)
    verdict = models.CharField(max_length=10)
    recommended_action = models.CharField(max_length=10)
    confidence = models.FloatField()
    language = models.CharField(max_length=8, blank=True)
    rules = models.JSONField(default=list, help_text="Per-rule results; finding values are masked.")
    input = models.TextField(blank=True)
    input_stored = models.BooleanField(default=False)
    input_chars = models.PositiveIntegerField(default=0)
    context = models.JSONField(null=True, blank=True)
    metadata = models.JSONField(null=True, blank=True)
    latency_ms = models.FloatField(default=0)
    batch_item_id = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField()

    class Meta:
        indexes = [
            models.Index(fields=["org", "-created_at"], name="guardrails_eval_org_created"),
            models.Index(fields=["org", "verdict", "-created_at"], name="guardrails_eval_org_verdict"),
        ]

    def __str__(self) -> str:
        return self.id


class Feedback(models.Model):
    """A note from anyone about the service or one evaluation."""

    id = models.CharField(primary_key=True, max_length=24, default=_feedback_id, editable=False)
    org = models.ForeignKey("accounts.Organization", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    message = models.TextField()
    about = models.CharField(max_length=300, blank=True)
    evaluation_id = models.CharField(max_length=64, blank=True)
    request_id = models.CharField(max_length=64, blank=True)
    contact = models.CharField(max_length=200, blank=True)
    ip = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField()

    def __str__(self) -> str:
        return self.id
