"""The starter workflow "email purchase order to order entry".

An inbound purchase-order email (plain text or a full .eml, lines as a table or CSV, in the body or
a text/csv attachment) is parsed by the read operation `parse_purchase_order` into a structured
order: the customer matched by the sender's address or company name, the lines matched to products
by SKU. Its `order_input` is what the agent sends to `create_sales_order`, which the policy then
executes, holds for review or refuses. Loading the template (POST /tower/template) fills the mock
ERP with the customers and products the sample emails in tower/samples/ refer to.
"""

import csv
import email
import email.policy
import io
import re
from decimal import Decimal
from pathlib import Path

from tower.adapters.mock import money
from tower.models import LegacyCustomer, LegacyProduct, PolicyRule
from tower.operations import Operation, register
from tower.policy import policy_defaults_ensure

SLUG = "email-purchase-order-to-order-entry"
SAMPLES = Path(__file__).parent / "samples"

CUSTOMERS = [
    ("C-1001", "Alpenbau GmbH", "purchasing@alpenbau.example", False),
    ("C-1002", "Ridley Joinery", "orders@ridley-joinery.example", False),
    ("C-1003", "Northwind Build Ltd", "buying@northwind-build.example", False),
    ("C-1004", "Shaky Structures Inc", "ap@shaky.example", True),
]
PRODUCTS = [
    ("BOLT-M8", "Hex bolt M8 x 40, zinc", "0.35", 5000),
    ("NUT-M8", "Hex nut M8, zinc", "0.08", 8000),
    ("WASH-M8", "Washer M8", "0.03", 10000),
    ("SCREW-5x60", "Wood screw 5x60", "0.06", 20000),
    ("BRKT-90", "Angle bracket 90mm", "1.90", 600),
    ("DRILL-18V", "Cordless drill 18V", "129.00", 25),
]


def template_install(org) -> None:
    """The ERP rows and policy of the workflow (existing rows are left as they are)."""
    for number, name, address, hold in CUSTOMERS:
        LegacyCustomer.objects.get_or_create(org=org, number=number, defaults={"name": name, "email": address,
                                                                               "credit_hold": hold})
    for sku, name, price, stock in PRODUCTS:
        LegacyProduct.objects.get_or_create(org=org, sku=sku, defaults={"name": name, "price": Decimal(price), "stock": stock})
    policy_defaults_ensure(org)


def template_summary(org) -> dict:
    return {
        "slug": SLUG,
        "name": "Email purchase order to order entry",
        "operations": ["parse_purchase_order", "find_customer", "find_product", "create_sales_order",
                       "change_order_quantity", "cancel_sales_order"],
        "customers": LegacyCustomer.objects.filter(org=org).count(),
        "products": LegacyProduct.objects.filter(org=org).count(),
        "policy_rules": PolicyRule.objects.filter(org=org).count(),
        "samples": sorted(p.name for p in SAMPLES.iterdir() if p.is_file()),
    }


# Parsing.

_PO = re.compile(r"(?:purchase\s+order|\bPO)\b(?:\s*(?:number|no\.?|#))?\s*[:#]?\s*([A-Z0-9][A-Z0-9-]{1,40})", re.I)
_SKU_HEADERS = {"sku", "item", "article", "part", "part no", "code", "product code"}
_QTY_HEADERS = {"qty", "quantity", "amount", "menge", "units"}


def _text_parts(raw: str) -> tuple[str, str, list[str]]:
    """(sender address, subject, text parts) of a message; a plain text without headers is one part."""
    message = email.message_from_string(raw, policy=email.policy.default)
    sender = str(message.get("From", "") or "")
    subject = str(message.get("Subject", "") or "")
    parts = []
    if message.is_multipart():
        for part in message.walk():
            if part.get_content_maintype() == "text":
                try:
                    parts.append(part.get_content())
                except (LookupError, ValueError):
                    continue
    else:
        body = message.get_payload(decode=False)
        parts.append(body if isinstance(body, str) else raw)
    if not sender and not subject:
        parts = [raw]
    return sender, subject, parts


def _rows(text: str) -> list[list[str]]:
    """Table rows of a text: markdown pipes, or CSV with , ; or tab."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    rows = []
    for line in lines:
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            if all(re.fullmatch(r":?-{2,}:?", c) for c in cells if c):
                continue
            rows.append(cells)
        elif any(sep in line for sep in (",", ";", "\t")):
            dialect = ";" if ";" in line else ("\t" if "\t" in line else ",")
            rows.append([c.strip() for c in next(csv.reader(io.StringIO(line), delimiter=dialect))])
    return rows


def _lines_of(text: str) -> list[dict]:
    rows = _rows(text)
    found = []
    header = None
    for row in rows:
        lowered = [c.lower() for c in row]
        sku_col = next((i for i, c in enumerate(lowered) if c in _SKU_HEADERS), None)
        qty_col = next((i for i, c in enumerate(lowered) if c in _QTY_HEADERS), None)
        if sku_col is not None and qty_col is not None:
            header = (sku_col, qty_col)
            continue
        if header and len(row) > max(header):
            sku, qty = row[header[0]], row[header[1]].replace(",", "").replace(" ", "")
            if sku and qty.isdigit() and int(qty) > 0:
                found.append({"sku": sku, "quantity": int(qty)})
    return found


def parse_purchase_order(org, raw: str) -> dict:
    """The structured order in an email, matched against the ERP."""
    sender, subject, parts = _text_parts(raw)
    address = email.utils.parseaddr(sender)[1].lower()
    text = "\n".join(parts)
    reference = ""
    for source in (subject, text):
        match = _PO.search(source)
        if match:
            reference = match.group(1)
            break
    customer = None
    if address:
        customer = LegacyCustomer.objects.filter(org=org, email__iexact=address).first()
    if customer is None:
        for row in LegacyCustomer.objects.filter(org=org):
            if row.name.lower() in text.lower():
                customer = row
                break
    lines = []
    for part in parts:
        lines.extend(_lines_of(part))
    products = {p.sku.lower(): p for p in LegacyProduct.objects.filter(org=org)}
    matched, unmatched, total = [], [], Decimal("0")
    for line in lines:
        product = products.get(line["sku"].lower())
        if product is None:
            unmatched.append(line)
            continue
        total += product.price * line["quantity"]
        matched.append({"sku": product.sku, "quantity": line["quantity"], "name": product.name,
                        "unit_price": money(product.price)})
    order_input = None
    if customer is not None and matched:
        order_input = {"customer": customer.number, "lines": [{"sku": m["sku"], "quantity": m["quantity"]} for m in matched],
                       "reference": reference[:100]}
    return {
        "sender": address,
        "reference": reference,
        "customer": {"customer": customer.number, "name": customer.name} if customer else None,
        "lines": matched,
        "unmatched_lines": unmatched,
        "estimated_total": money(total),
        "order_input": order_input,
        "ready": order_input is not None and not unmatched,
    }


def _parse_facts(adapter, data) -> dict:
    return {}


def _parse_run(adapter, data, ref) -> dict:
    return parse_purchase_order(adapter.org, data["email"])


register(Operation(
    "parse_purchase_order", "read",
    "Parse a purchase-order email (plain text or .eml; lines as a table or CSV) into a structured order matched "
    "against the ERP; `order_input` is ready for create_sales_order.",
    {"type": "object", "properties": {"email": {"type": "string", "minLength": 1, "maxLength": 200_000}},
     "required": ["email"], "additionalProperties": False},
    _parse_facts, _parse_run,
))
