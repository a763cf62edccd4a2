"""Organizations, their API keys and their audit log."""

import uuid

from django.conf import settings
from django.db import models


class Organization(models.Model):
    """A tenant: every product record belongs to exactly one organization."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=200)
    owner = models.OneToOneField(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="organization",
        help_text="The person who signs in for this organization; empty for an agent's account.",
    )
    plan = models.CharField(max_length=20, default="free", help_text="Evaluation plan id from the catalog.")
    atlas_tier = models.CharField(max_length=20, default="free", help_text="Atlas tier id: free, pro or team.")
    store_inputs = models.BooleanField(default=True)
    retention_days = models.PositiveIntegerField(null=True, blank=True)
    domain = models.CharField(max_length=253, blank=True, help_text="The domain this organization proves control of.")
    domain_verified_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["domain"], condition=models.Q(domain_verified_at__isnull=False), name="org_verified_domain_once"
            )
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def is_verified(self) -> bool:
        """A person's login or a verified domain: lifts the limits of an anonymous agent's account."""
        return self.owner_id is not None or self.domain_verified_at is not None


class ApiKey(models.Model):
    """An organization key (`svc_live_…`): stored as a keyed hash, listed by its visible prefix."""

    SCOPE_FULL = "full"
    SCOPE_EVALUATE = "evaluate"
    SCOPES = [(SCOPE_FULL, "full"), (SCOPE_EVALUATE, "evaluate")]

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=100)
    scope = models.CharField(max_length=20, choices=SCOPES, default=SCOPE_FULL)
    prefix = models.CharField(max_length=24, help_text="The first characters of the key, safe to show.")
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    is_active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["org", "is_active"])]

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.name})"


class AuditEvent(models.Model):
    """A security-relevant event of one organization: keys, webhooks, rule sets, billing, rejected keys."""

    id = models.BigAutoField(primary_key=True)
    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="audit_events")
    action = models.CharField(max_length=80)
    actor = models.CharField(max_length=120, blank=True, help_text="Key prefix, 'signup', 'admin:<user>' or 'system'.")
    target = models.CharField(max_length=200, blank=True)
    data = models.JSONField(default=dict, blank=True)
    ip = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["org", "-created_at", "-id"])]

    def __str__(self) -> str:
        return f"{self.action} {self.target}"


class DomainProof(models.Model):
    """A value someone must publish at a domain: to verify an organization's domain, or to recover one."""

    ORG = "org"
    RECOVERY = "recovery"
    PURPOSES = [(ORG, "organization domain"), (RECOVERY, "account recovery")]

    purpose = models.CharField(max_length=20, choices=PURPOSES)
    org = models.ForeignKey(Organization, null=True, blank=True, on_delete=models.CASCADE, related_name="domain_proofs")
    domain = models.CharField(max_length=253, db_index=True)
    value = models.CharField(max_length=100)
    requested_ip = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField()

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.purpose} {self.domain}"


class Webhook(models.Model):
    """An organization's webhook endpoint (one per organization) and its signing secret, encrypted."""

    org = models.OneToOneField(Organization, on_delete=models.CASCADE, related_name="webhook", primary_key=True)
    url = models.URLField(max_length=2000)
    secret_sealed = models.TextField(help_text="The signing secret, encrypted with core.secretbox.")
    secret_prefix = models.CharField(max_length=16)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return self.url


class WebhookEvent(models.Model):
    """Something that happened in an organization, as sent to its webhook (`evt_…`)."""

    id = models.CharField(max_length=24, primary_key=True)
    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="webhook_events")
    type = models.CharField(max_length=60)
    data = models.JSONField(default=dict)
    created_at = models.DateTimeField(db_index=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.id} {self.type}"


class WebhookDelivery(models.Model):
    """One event on its way to one URL: claimed by a worker with a lease, retried with backoff."""

    PENDING = "pending"
    DELIVERING = "delivering"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    STATUSES = [(PENDING, PENDING), (DELIVERING, DELIVERING), (SUCCEEDED, SUCCEEDED), (FAILED, FAILED)]

    event = models.ForeignKey(WebhookEvent, on_delete=models.CASCADE, related_name="deliveries")
    url = models.URLField(max_length=2000)
    status = models.CharField(max_length=12, choices=STATUSES, default=PENDING)
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(db_index=True)
    locked_until = models.DateTimeField(null=True, blank=True)
    last_status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    last_error = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField()
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["status", "next_attempt_at"])]

    def __str__(self) -> str:
        return f"{self.event_id} → {self.url} ({self.status})"


class WebhookAttempt(models.Model):
    """One POST of a delivery: what the receiver answered, or why it could not be reached."""

    delivery = models.ForeignKey(WebhookDelivery, on_delete=models.CASCADE, related_name="attempt_log")
    number = models.PositiveIntegerField()
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    error = models.CharField(max_length=300, blank=True)
    duration_ms = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["delivery", "number"]

    def __str__(self) -> str:
        return f"{self.delivery_id} #{self.number}: {self.status_code or self.error}"
