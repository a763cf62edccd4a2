"""Policy: an organization's rules decide auto, review or reject from the operation and its facts.

The strictest matching rule wins (reject > review > auto). With no matching rule a read is auto
and a write goes to review: a gap in the policy holds a write for a person, never runs it.
"""

from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from django.db import transaction

from tower.models import PolicyRule

SEVERITY = {"auto": 0, "review": 1, "reject": 2}

# The policy every organization starts with; an operator edits it in the admin.
DEFAULT_RULES = [
    ("unknown-customer", "create_sales_order", "customer_known", "is_false", "", "reject", "The customer is not in the ERP."),
    ("credit-hold", "create_sales_order", "customer_on_credit_hold", "is_true", "", "reject", "The customer is on credit hold."),
    ("unknown-product", "create_sales_order", "unknown_products", "is_true", "", "reject", "A product is not in the ERP."),
    ("over-stock", "create_sales_order", "exceeds_stock", "is_true", "", "reject", "A line asks for more than the stock."),
    ("large-order", "create_sales_order", "order_total", "gt", "1000", "review", "Orders over 1000.00 are reviewed by a person."),
    ("order-default", "create_sales_order", "", "always", "", "auto", "Orders within the limits run automatically."),
    ("change-no-order", "change_order_quantity", "order_found", "is_false", "", "reject", "The order is not in the ERP."),
    ("change-closed", "change_order_quantity", "order_open", "is_false", "", "reject", "Only an open order can change."),
    ("change-no-line", "change_order_quantity", "line_found", "is_false", "", "reject", "The order has no line for this SKU."),
    ("change-over-stock", "change_order_quantity", "exceeds_stock", "is_true", "", "reject", "The new quantity needs more than the stock."),
    ("change-large", "change_order_quantity", "new_order_total", "gt", "1000", "review", "Orders over 1000.00 are reviewed by a person."),
    ("change-default", "change_order_quantity", "", "always", "", "auto", "Quantity changes within the limits run automatically."),
    ("cancel-no-order", "cancel_sales_order", "order_found", "is_false", "", "reject", "The order is not in the ERP."),
    ("cancel-closed", "cancel_sales_order", "order_open", "is_false", "", "reject", "The order is already cancelled."),
    ("cancel-review", "cancel_sales_order", "", "always", "", "review", "Cancellations cannot be undone: a person reviews them."),
]


@dataclass
class Decision:
    decision: str
    reasons: list[dict] = field(default_factory=list)
    facts: dict = field(default_factory=dict)


def policy_defaults_ensure(org) -> None:
    """Give an organization the default rules the first time it needs a policy."""
    if PolicyRule.objects.filter(org=org).exists():
        return
    rows = [PolicyRule(org=org, name=name, operation=op, fact=fact, comparator=comparator, value=value,
                       decision=decision, message=message)
            for name, op, fact, comparator, value, decision, message in DEFAULT_RULES]
    with transaction.atomic():
        PolicyRule.objects.bulk_create(rows, ignore_conflicts=True)


def _number(value) -> Decimal | None:
    try:
        return Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None


def rule_matches(rule: PolicyRule, facts: dict) -> bool:
    if rule.comparator == "always":
        return True
    if rule.fact not in facts:
        return False
    value = facts[rule.fact]
    if rule.comparator == "is_true":
        return value is True
    if rule.comparator == "is_false":
        return value is False
    left, right = _number(value), _number(rule.value)
    if left is None or right is None:
        return False
    return {"gt": left > right, "gte": left >= right, "lt": left < right, "lte": left <= right, "eq": left == right}.get(
        rule.comparator, False
    )


def policy_evaluate(*, org, operation, facts: dict) -> Decision:
    """The decision for one operation and its facts under the organization's enabled rules."""
    policy_defaults_ensure(org)
    rules = PolicyRule.objects.filter(org=org, enabled=True, operation__in=[operation.name, "*"]).order_by("name")
    matched = [rule for rule in rules if rule_matches(rule, facts)]
    if not matched:
        decision = "auto" if operation.kind == "read" else "review"
        message = "Reads run automatically." if operation.kind == "read" else "No rule covers this write: a person reviews it."
        return Decision(decision, [{"rule": None, "decision": decision, "message": message}], facts)
    decision = max((rule.decision for rule in matched), key=SEVERITY.__getitem__)
    reasons = [{"rule": rule.name, "decision": rule.decision, "message": rule.message}
               for rule in sorted(matched, key=lambda r: (-SEVERITY[r.decision], r.name)) if rule.decision == decision]
    return Decision(decision, reasons, facts)
