"""Tower: agents and their keys, policy rules, actions, the receipt chain, quotas, and the mock legacy system."""

import uuid

from django.db import models

from accounts.models import Organization

DECISIONS = [("auto", "auto"), ("review", "review"), ("reject", "reject")]


class Agent(models.Model):
    """A program acting for an organization with its own key (`svc_agent_…`), limited to `scopes`."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="tower_agents")
    name = models.CharField(max_length=100)
    scopes = models.JSONField(help_text="Operation names this agent may call, or ['*'] for every operation.")
    prefix = models.CharField(max_length=32, help_text="The first characters of the key, safe to show.")
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    is_active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["org", "is_active"])]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    def allows(self, operation: str) -> bool:
        return "*" in self.scopes or operation in self.scopes


class PolicyRule(models.Model):
    """One rule of an organization's policy: when `fact` compares true, the operation gets `decision`.

    The strictest matching decision wins (reject over review over auto); a write that no rule
    matches goes to review, a read that no rule matches is auto.
    """

    COMPARATORS = [
        ("always", "always"),
        ("is_true", "is true"),
        ("is_false", "is false"),
        ("gt", ">"),
        ("gte", ">="),
        ("lt", "<"),
        ("lte", "<="),
        ("eq", "="),
    ]

    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="tower_rules")
    name = models.SlugField(max_length=64, help_text="Named in the decision's reasons.")
    operation = models.CharField(max_length=64, help_text="An operation name, or * for every operation.")
    fact = models.CharField(max_length=64, blank=True, help_text="A fact of the operation (see capabilities); empty for 'always'.")
    comparator = models.CharField(max_length=10, choices=COMPARATORS, default="always")
    value = models.CharField(max_length=64, blank=True, help_text="The number compared with, for >, >=, <, <= and =.")
    decision = models.CharField(max_length=6, choices=DECISIONS)
    message = models.CharField(max_length=200, help_text="The reason, as the agent and the reviewer read it.")
    enabled = models.BooleanField(default=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["org", "operation", "name"]
        constraints = [models.UniqueConstraint(fields=["org", "name"], name="tower_rule_name_once")]

    def __str__(self) -> str:
        return f"{self.name}: {self.operation} {self.fact} {self.comparator} {self.value} -> {self.decision}"


class Action(models.Model):
    """One request of an agent to run an operation, and what became of it.

    States: executed, pending_review, rejected, declined, failed, compensated (see tower/states.py).
    """

    EXECUTED = "executed"
    PENDING_REVIEW = "pending_review"
    REJECTED = "rejected"
    DECLINED = "declined"
    FAILED = "failed"
    COMPENSATED = "compensated"
    STATES = [(s, s) for s in (EXECUTED, PENDING_REVIEW, REJECTED, DECLINED, FAILED, COMPENSATED)]

    id = models.CharField(primary_key=True, max_length=24, editable=False)
    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="tower_actions")
    agent = models.ForeignKey(Agent, null=True, on_delete=models.SET_NULL, related_name="actions")
    agent_name = models.CharField(max_length=100, blank=True)
    operation = models.CharField(max_length=64)
    input = models.JSONField()
    input_digest = models.CharField(max_length=64)
    idempotency_key = models.CharField(max_length=128, blank=True)
    decision = models.CharField(max_length=6, choices=DECISIONS)
    reasons = models.JSONField(default=list)
    facts = models.JSONField(default=dict)
    state = models.CharField(max_length=20, choices=STATES, db_index=True)
    result = models.JSONField(null=True, blank=True)
    error = models.CharField(max_length=300, blank=True)
    reviewer = models.CharField(max_length=150, blank=True)
    review_note = models.CharField(max_length=500, blank=True)
    reviewed_at = models.DateTimeField(null=True, blank=True)
    compensation = models.JSONField(null=True, blank=True)
    compensated_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(db_index=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["org", "state"])]

    def __str__(self) -> str:
        return f"{self.id} {self.operation} ({self.state})"


class ReviewQueueItem(Action):
    """The review console's queue: actions held for a person's review."""

    class Meta:
        proxy = True
        verbose_name = "action held for review"
        verbose_name_plural = "review queue"


class ChainHead(models.Model):
    """The head of an organization's receipt chain: locked FOR UPDATE by every append (no gap, no fork)."""

    org = models.OneToOneField(Organization, primary_key=True, on_delete=models.CASCADE, related_name="tower_chain")
    last_sequence = models.PositiveBigIntegerField(default=0)
    last_hash = models.CharField(max_length=64, default="0" * 64)

    def __str__(self) -> str:
        return f"{self.org_id} @ {self.last_sequence}"


class Receipt(models.Model):
    """A signed link of the chain: `payload` is the exact RFC 8785 bytes that were hashed and signed."""

    id = models.CharField(primary_key=True, max_length=24, editable=False)
    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="tower_receipts")
    sequence = models.PositiveBigIntegerField()
    prev_hash = models.CharField(max_length=64)
    hash = models.CharField(max_length=64)
    payload = models.BinaryField()
    signature = models.CharField(max_length=100)
    key_id = models.CharField(max_length=64)
    kind = models.CharField(max_length=20)
    action = models.ForeignKey(Action, null=True, on_delete=models.SET_NULL, related_name="receipts")
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["org", "sequence"]
        constraints = [
            models.UniqueConstraint(fields=["org", "sequence"], name="tower_receipt_sequence_once"),
            models.UniqueConstraint(fields=["org", "prev_hash"], name="tower_receipt_no_fork"),
            models.CheckConstraint(condition=models.Q(sequence__gte=1), name="tower_receipt_sequence_from_1"),
        ]

    def __str__(self) -> str:
        return f"#{self.sequence} {self.kind}"


class QuotaCounter(models.Model):
    """Units used by an organization in one period: `decisions` per UTC day, `actions` per UTC month."""

    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="tower_quota")
    kind = models.CharField(max_length=10)
    period = models.CharField(max_length=10, help_text="YYYY-MM-DD for decisions, YYYY-MM for actions.")
    used = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["org", "kind", "period"], name="tower_quota_once")]

    def __str__(self) -> str:
        return f"{self.kind} {self.period}: {self.used}"


class TemplateInstall(models.Model):
    """A starter workflow loaded into an organization (once)."""

    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="tower_templates")
    slug = models.SlugField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["org", "slug"], name="tower_template_once")]

    def __str__(self) -> str:
        return self.slug


# The mock legacy system (an ERP's customers, products, stock and sales orders), one per organization.


class LegacyCustomer(models.Model):
    """A customer in the mock ERP."""

    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")
    number = models.CharField(max_length=20, help_text="The ERP's customer number, e.g. C-1001.")
    name = models.CharField(max_length=200)
    email = models.CharField(max_length=254, blank=True)
    credit_hold = models.BooleanField(default=False)

    class Meta:
        ordering = ["number"]
        constraints = [models.UniqueConstraint(fields=["org", "number"], name="tower_customer_number_once")]

    def __str__(self) -> str:
        return f"{self.number} {self.name}"


class LegacyProduct(models.Model):
    """A product and its stock in the mock ERP; prices are decimal strings in the API."""

    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")
    sku = models.CharField(max_length=40)
    name = models.CharField(max_length=200)
    price = models.DecimalField(max_digits=12, decimal_places=2)
    stock = models.IntegerField(default=0)

    class Meta:
        ordering = ["sku"]
        constraints = [
            models.UniqueConstraint(fields=["org", "sku"], name="tower_product_sku_once"),
            models.CheckConstraint(condition=models.Q(stock__gte=0), name="tower_product_stock_not_negative"),
        ]

    def __str__(self) -> str:
        return f"{self.sku} {self.name}"


class LegacyOrder(models.Model):
    """A sales order in the mock ERP; `external_ref` (the action id) makes a retried creation a no-op."""

    OPEN = "open"
    CANCELLED = "cancelled"

    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")
    number = models.CharField(max_length=20)
    customer = models.ForeignKey(LegacyCustomer, on_delete=models.CASCADE, related_name="orders")
    status = models.CharField(max_length=10, default=OPEN)
    reference = models.CharField(max_length=100, blank=True, help_text="The buyer's purchase order number.")
    external_ref = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["org", "number"], name="tower_order_number_once"),
            models.UniqueConstraint(fields=["org", "external_ref"], name="tower_order_external_ref_once"),
        ]

    def __str__(self) -> str:
        return f"{self.number} ({self.status})"


class LegacyOrderLine(models.Model):
    """One line of a sales order: a product, a quantity and the unit price at the time of ordering."""

    order = models.ForeignKey(LegacyOrder, on_delete=models.CASCADE, related_name="lines")
    product = models.ForeignKey(LegacyProduct, on_delete=models.CASCADE, related_name="+")
    quantity = models.PositiveIntegerField()
    unit_price = models.DecimalField(max_digits=12, decimal_places=2)

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["order", "product"], name="tower_order_line_product_once")]

    def __str__(self) -> str:
        return f"{self.quantity} x {self.product_id}"
