"""The typed operations agents call: name, JSON Schema input, read or write, facts for the policy,
the call on the legacy system, and how a write is compensated."""

from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal

from jsonschema import Draft202012Validator

from tower.adapters import LegacyAdapter
from tower.adapters.mock import money

NAME_PATTERN = r"^[a-z][a-z0-9_]{0,63}$"

_QUERY = {"type": "string", "minLength": 1, "maxLength": 200}
_ORDER = {"type": "string", "pattern": r"^SO-[A-Z0-9]{1,20}$", "description": "An ERP order number, e.g. SO-1A2B3C4D5E."}
_SKU = {"type": "string", "pattern": r"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$"}
_QUANTITY = {"type": "integer", "minimum": 1, "maximum": 100000}


@dataclass(frozen=True)
class Operation:
    name: str
    kind: str  # "read" or "write"
    description: str
    input_schema: dict
    facts: Callable[[LegacyAdapter, dict], dict]
    run: Callable[[LegacyAdapter, dict, str], dict]
    compensation: str | None = None  # how an executed write is undone; None: it cannot be
    compensate: Callable[[LegacyAdapter, dict, dict, str], dict] | None = None  # (adapter, input, result, ref)
    fact_names: tuple[str, ...] = ()

    @property
    def validator(self) -> Draft202012Validator:
        return _validators[self.name]

    def describe(self) -> dict:
        return {
            "name": self.name,
            "kind": self.kind,
            "description": self.description,
            "input_schema": self.input_schema,
            "compensable": self.compensate is not None,
            "compensation": self.compensation,
            "facts": list(self.fact_names),
        }


def _object(properties: dict, required: list[str]) -> dict:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


# Reads: no facts, never compensated.


def _no_facts(adapter, data) -> dict:
    return {}


def _find_customer(adapter, data, ref) -> dict:
    return {"customers": adapter.customer_search(data["query"])}


def _find_product(adapter, data, ref) -> dict:
    return {"products": adapter.product_search(data["query"])}


def _get_order(adapter, data, ref) -> dict:
    order = adapter.order_get(data["order"])
    return {"found": order is not None, "order": order}


# create_sales_order


def _merged_lines(lines: list[dict]) -> dict[str, int]:
    wanted: dict[str, int] = {}
    for line in lines:
        wanted[line["sku"]] = wanted.get(line["sku"], 0) + line["quantity"]
    return wanted


def _create_facts(adapter, data) -> dict:
    customer = adapter.customer_get(data["customer"])
    total = Decimal("0")
    unknown = exceeds = False
    for sku, quantity in _merged_lines(data["lines"]).items():
        product = adapter.product_get(sku)
        if product is None:
            unknown = True
            continue
        total += Decimal(product["price"]) * quantity
        exceeds = exceeds or quantity > product["stock"]
    return {
        "customer_known": customer is not None,
        "customer_on_credit_hold": bool(customer and customer["credit_hold"]),
        "unknown_products": unknown,
        "exceeds_stock": exceeds,
        "order_total": money(total),
        "line_count": len(data["lines"]),
    }


def _create_run(adapter, data, ref) -> dict:
    return adapter.order_create(customer=data["customer"], lines=data["lines"], reference=data.get("reference", ""),
                                external_ref=ref)


def _create_undo(adapter, data, result, ref) -> dict:
    return adapter.order_cancel(order=result["order"], external_ref=ref)


# change_order_quantity


def _change_facts(adapter, data) -> dict:
    order = adapter.order_get(data["order"])
    facts = {"order_found": order is not None, "order_open": bool(order and order["status"] == "open"),
             "line_found": False, "exceeds_stock": False, "new_order_total": "0.00"}
    if order is None:
        return facts
    total = Decimal(order["total"])
    for line in order["lines"]:
        if line["sku"] == data["sku"]:
            facts["line_found"] = True
            product = adapter.product_get(data["sku"]) or {"stock": 0}
            facts["exceeds_stock"] = data["quantity"] - line["quantity"] > product["stock"]
            total += Decimal(line["unit_price"]) * (data["quantity"] - line["quantity"])
    facts["new_order_total"] = money(total)
    return facts


def _change_run(adapter, data, ref) -> dict:
    return adapter.order_line_set_quantity(order=data["order"], sku=data["sku"], quantity=data["quantity"], external_ref=ref)


def _change_undo(adapter, data, result, ref) -> dict:
    return adapter.order_line_set_quantity(order=data["order"], sku=data["sku"], quantity=result["previous_quantity"],
                                           external_ref=ref)


# cancel_sales_order


def _cancel_facts(adapter, data) -> dict:
    order = adapter.order_get(data["order"])
    return {"order_found": order is not None, "order_open": bool(order and order["status"] == "open"),
            "order_total": order["total"] if order else "0.00"}


def _cancel_run(adapter, data, ref) -> dict:
    return adapter.order_cancel(order=data["order"], external_ref=ref)


CATALOG: dict[str, Operation] = {
    op.name: op
    for op in [
        Operation("find_customer", "read", "Customers whose name contains the query, or whose email or number is it.",
                  _object({"query": _QUERY}, ["query"]), _no_facts, _find_customer),
        Operation("find_product", "read", "Products whose name contains the query, or whose SKU is it, with price and stock.",
                  _object({"query": _QUERY}, ["query"]), _no_facts, _find_product),
        Operation("get_order", "read", "A sales order with its lines and total.",
                  _object({"order": _ORDER}, ["order"]), _no_facts, _get_order),
        Operation(
            "create_sales_order", "write", "Create a sales order for a customer; stock is taken at once.",
            _object({
                "customer": {"type": "string", "pattern": r"^C-[0-9]{1,10}$", "description": "ERP customer number."},
                "lines": {"type": "array", "minItems": 1, "maxItems": 100,
                          "items": _object({"sku": _SKU, "quantity": _QUANTITY}, ["sku", "quantity"])},
                "reference": {"type": "string", "maxLength": 100, "description": "The buyer's purchase order number."},
            }, ["customer", "lines"]),
            _create_facts, _create_run, "The order is cancelled and its stock given back.", _create_undo,
            ("customer_known", "customer_on_credit_hold", "unknown_products", "exceeds_stock", "order_total", "line_count"),
        ),
        Operation(
            "change_order_quantity", "write", "Set the quantity of one line of an open order.",
            _object({"order": _ORDER, "sku": _SKU, "quantity": _QUANTITY}, ["order", "sku", "quantity"]),
            _change_facts, _change_run, "The line is set back to its previous quantity.", _change_undo,
            ("order_found", "order_open", "line_found", "exceeds_stock", "new_order_total"),
        ),
        Operation(
            "cancel_sales_order", "write", "Cancel an open order and give its stock back. Cannot be undone.",
            _object({"order": _ORDER}, ["order"]),
            _cancel_facts, _cancel_run, None, None, ("order_found", "order_open", "order_total"),
        ),
    ]
}

_validators: dict[str, Draft202012Validator] = {}


def register(operation: Operation) -> None:
    """Add an operation to the catalog (the starter workflow adds its own)."""
    Draft202012Validator.check_schema(operation.input_schema)
    CATALOG[operation.name] = operation
    _validators[operation.name] = Draft202012Validator(operation.input_schema)


for _op in list(CATALOG.values()):
    register(_op)


def input_errors(operation: Operation, data) -> list[tuple[str, str]]:
    """Each violation of the operation's input schema as (JSON pointer, one sentence), first by path."""
    found = []
    for error in sorted(operation.validator.iter_errors(data), key=lambda e: list(map(str, e.absolute_path))):
        pointer = "/" + "/".join(str(part) for part in error.absolute_path) if error.absolute_path else ""
        found.append((f"input{pointer}", error.message[:300]))
    return found
