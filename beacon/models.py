"""Beacon's records: one row per check of a site, and the reports an organization keeps."""

from django.db import models

from . import constants


class Check(models.Model):
    """One paid (or free) check of one site: its state, its attempts, and the report when done.

    States: awaiting_payment -> queued -> running -> done | failed. A worker claims a queued check
    (or a running one whose lease ran out) with one conditional UPDATE, so two workers never scan
    the same check at once and a worker that dies hands it on when the lease expires.
    """

    id = models.CharField(primary_key=True, max_length=24)
    url = models.CharField(max_length=2048)
    org = models.ForeignKey("accounts.Organization", null=True, blank=True, on_delete=models.CASCADE, related_name="beacon_checks")
    status = models.CharField(max_length=20, choices=[(s, s) for s in constants.STATES], default=constants.QUEUED)
    paid_by = models.CharField(max_length=40, blank=True, default="")  # "card", "x402", "free:billing_disabled", "free:verified_domain"
    checkout_url = models.CharField(max_length=2048, blank=True, default="")  # the card checkout (Stripe) while awaiting_payment
    created_at = models.DateTimeField()
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    report = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True, default="")

    class Meta:
        indexes = [models.Index(fields=["status", "lease_until"])]

    def __str__(self) -> str:
        return f"{self.id} {self.url} {self.status}"


class SavedReport(models.Model):
    """A check an organization keeps in its list of saved reports."""

    org = models.ForeignKey("accounts.Organization", on_delete=models.CASCADE, related_name="beacon_saved")
    check_ref = models.ForeignKey(Check, on_delete=models.CASCADE, related_name="saved_by", db_column="check_id")
    saved_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["org", "check_ref"], name="beacon_saved_once")]

    def __str__(self) -> str:
        return f"{self.org_id} saved {self.check_ref_id}"
