"""Tables of the shared mechanisms."""

from django.db import models


class IdempotencyRecord(models.Model):
    """One use of an idempotency key: the request's fingerprint and, once done, its response."""

    RUNNING = "running"
    DONE = "done"

    scope = models.CharField(max_length=200, help_text="Whose key space: an organization, an agent or a client address.")
    key = models.CharField(max_length=255)
    fingerprint = models.CharField(max_length=64, help_text="SHA-256 of method, path and canonical body.")
    state = models.CharField(max_length=10, default=RUNNING)
    status_code = models.PositiveSmallIntegerField(null=True)
    body = models.JSONField(null=True)
    headers = models.JSONField(default=dict)
    created_at = models.DateTimeField(db_index=True)
    locked_until = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["scope", "key"], name="idempotency_scope_key_unique")]

    def __str__(self) -> str:
        return f"{self.scope} {self.key} ({self.state})"
