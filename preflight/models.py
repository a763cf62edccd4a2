"""Preflight's tables: every check (a verdict) and every report of a landed transaction against one."""

from django.db import models


class Check(models.Model):
    """One check of one transaction against a policy: the verdict, signed and published.

    Public (the record): id, decision, reason codes, programs, digest, covered, times and the signed
    receipt. Private to the organization that asked: the policy (wallet and limits), the reasons'
    details, the effects and the transaction itself, kept to compare with what later lands.
    """

    id = models.CharField(primary_key=True, max_length=32)
    org = models.ForeignKey("accounts.Organization", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    channel = models.CharField(max_length=16, default="api")  # api, x402, mcp, a2a
    created_at = models.DateTimeField(db_index=True)
    fresh_until = models.DateTimeField()
    decision = models.CharField(max_length=8)
    reason_codes = models.JSONField(default=list)
    programs = models.JSONField(default=list)
    digest = models.CharField(max_length=64, db_index=True)
    covered = models.BooleanField(default=False)
    simulator = models.CharField(max_length=16)
    receipt = models.JSONField()  # {"payload": {...}, "key_id", "algorithm", "signature"}
    # Private below.
    reasons = models.JSONField(default=list)
    effects = models.JSONField(default=dict)
    policy = models.JSONField(default=dict)
    transaction = models.TextField()
    account_keys = models.JSONField(default=list)  # static, then loaded writable, then loaded read-only
    details_salt = models.CharField(max_length=64)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.id} {self.decision}"


class Report(models.Model):
    """A transaction reported as landed against a verdict, with what the chain showed."""

    id = models.CharField(primary_key=True, max_length=32)
    check_row = models.ForeignKey(Check, on_delete=models.CASCADE, related_name="reports", db_column="check_id")
    signature = models.CharField(max_length=100)
    created_at = models.DateTimeField(db_index=True)
    slot = models.BigIntegerField(null=True)
    block_time = models.DateTimeField(null=True)
    succeeded = models.BooleanField(default=False)
    same_transaction = models.BooleanField(default=False)
    within_window = models.BooleanField(default=False)
    exceeded = models.JSONField(default=list)  # reason codes of the limits the landed transaction broke
    miss = models.BooleanField(default=False)
    covered_miss = models.BooleanField(default=False)
    chain = models.JSONField(default=dict)  # amounts the chain showed (not in the public record)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [models.UniqueConstraint(fields=["check_row", "signature"], name="preflight_report_once")]

    def __str__(self) -> str:
        return f"{self.id} {self.signature}"
