"""Daily allowances, per-product usage and prepaid credits, all in the database."""

from django.db import models

from accounts.models import Organization


class Allowance(models.Model):
    """Units taken today from one meter's daily allowance by one subject (an organization or an address).

    Taken only with conditional UPDATEs, so the count is exact under concurrency.
    """

    subject = models.CharField(max_length=120, help_text="org:<uuid> or ip:<address>")
    meter = models.CharField(max_length=40)
    day = models.DateField(help_text="The UTC day; a new row (so a fresh allowance) each day.")
    used = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["subject", "meter", "day"], name="allowance_subject_meter_day")]

    def __str__(self) -> str:
        return f"{self.subject} {self.meter} {self.day}: {self.used}"


class ProductUsage(models.Model):
    """Successful metered calls of an organization, per product and UTC day (for /usage)."""

    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="product_usage")
    product = models.CharField(max_length=40)
    day = models.DateField()
    count = models.PositiveIntegerField(default=0)
    credits_used = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["org", "product", "day"], name="product_usage_org_product_day")]

    def __str__(self) -> str:
        return f"{self.org_id} {self.product} {self.day}: {self.count}"


class CreditBalance(models.Model):
    """Prepaid credits of an organization: spent after the day's allowance, never expire."""

    org = models.OneToOneField(Organization, on_delete=models.CASCADE, related_name="credit_balance", primary_key=True)
    balance = models.BigIntegerField(default=0)

    class Meta:
        constraints = [models.CheckConstraint(condition=models.Q(balance__gte=0), name="credit_balance_not_negative")]

    def __str__(self) -> str:
        return f"{self.org_id}: {self.balance}"


class CreditEntry(models.Model):
    """One change to a credit balance that is not spending: a purchase, a grant, a correction."""

    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="credit_entries")
    amount = models.BigIntegerField()
    reason = models.CharField(max_length=200)
    reference = models.CharField(max_length=200, blank=True, help_text="Payment or event id, unique per org when set.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["org", "reference"], condition=~models.Q(reference=""), name="credit_entry_reference_once")
        ]

    def __str__(self) -> str:
        return f"{self.org_id} {self.amount:+d} {self.reason}"
