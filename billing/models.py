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


# Payments: Stripe customers, subscriptions and events; x402 payments.


class StripeCustomer(models.Model):
    """The Stripe customer that stands for one organization (created on its first checkout or subscribe)."""

    org = models.OneToOneField(Organization, on_delete=models.CASCADE, related_name="stripe_customer", primary_key=True)
    customer_id = models.CharField(max_length=255, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.org_id}: {self.customer_id}"


class Subscription(models.Model):
    """One Stripe subscription of an organization, for one product line: the evaluation plan, the Atlas tier
    or Tower. Stripe is the source of truth; this row mirrors it from API answers and webhook events.
    `synced_at` (Unix seconds) orders updates, so an older event arriving late changes nothing."""

    PRODUCTS = [("plan", "evaluation plan"), ("atlas", "Atlas tier"), ("tower", "Tower")]
    LIVE_STATUSES = ("active", "trialing", "past_due")

    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="subscriptions")
    product = models.CharField(max_length=10, choices=PRODUCTS)
    plan = models.CharField(max_length=20, help_text="Plan id (starter, growth, scale), tier (pro, team) or 'tower'.")
    subscription_id = models.CharField(max_length=255, unique=True)
    status = models.CharField(max_length=30, help_text="Stripe's status: incomplete, active, past_due, canceled, ...")
    cancel_at_period_end = models.BooleanField(default=False)
    current_period_end = models.DateTimeField(null=True, blank=True)
    cancels_at = models.DateTimeField(null=True, blank=True)
    synced_at = models.BigIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["org", "product", "status"])]

    def __str__(self) -> str:
        return f"{self.org_id} {self.product}:{self.plan} {self.status}"

    @property
    def is_live(self) -> bool:
        return self.status in self.LIVE_STATUSES


class StripeEvent(models.Model):
    """A Stripe webhook event already applied: its id is stored so a replay is applied once."""

    id = models.CharField(max_length=255, primary_key=True)
    type = models.CharField(max_length=100)
    created = models.BigIntegerField(help_text="Stripe's `created`, Unix seconds.")
    org = models.ForeignKey(Organization, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    outcome = models.CharField(max_length=200, blank=True)
    received_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-received_at"]

    def __str__(self) -> str:
        return f"{self.id} {self.type}"


class X402Payment(models.Model):
    """One x402 payment authorization presented on a paid route, and what became of it.

    The authorization (payer and EIP-3009 nonce on one network and asset) is unique: a second request
    carrying it is refused while the first runs or once it settled. A request that failed leaves the
    row `released` (never settled), and the same authorization may then pay for a retry."""

    PENDING = "pending"
    SETTLED = "settled"
    RELEASED = "released"
    FAILED = "failed"
    STATUSES = [(PENDING, PENDING), (SETTLED, SETTLED), (RELEASED, "released (request failed, not settled)"), (FAILED, "settlement failed")]

    route = models.CharField(max_length=200)
    amount = models.CharField(max_length=40, help_text="Atomic units of the asset (USDC has 6 decimals).")
    asset = models.CharField(max_length=100)
    network = models.CharField(max_length=40)
    pay_to = models.CharField(max_length=100)
    payer = models.CharField(max_length=100)
    nonce = models.CharField(max_length=100)
    transaction = models.CharField(max_length=100, blank=True)
    status = models.CharField(max_length=10, choices=STATUSES, default=PENDING)
    response_status = models.PositiveSmallIntegerField(null=True, blank=True)
    error = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    settled_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["network", "asset", "payer", "nonce"], name="x402_authorization_once")
        ]

    def __str__(self) -> str:
        return f"{self.route} {self.amount} from {self.payer} ({self.status})"
