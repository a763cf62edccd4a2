"""The mock ERP: customers, products with stock, sales orders and their lines, in our own database.

It behaves like the real thing where Tower cares: stock cannot go below zero (a conditional UPDATE,
so two concurrent orders cannot both take the last unit), an order created twice with the same
external reference is created once, a cancelled order gives its stock back.
"""

import hashlib
from decimal import Decimal

from django.db import IntegrityError, transaction
from django.db.models import F, Q

from tower.adapters.base import AdapterError, LegacyAdapter
from tower.models import LegacyCustomer, LegacyOrder, LegacyOrderLine, LegacyProduct


def money(value: Decimal) -> str:
    return str(Decimal(value).quantize(Decimal("0.01")))


def _customer(row: LegacyCustomer) -> dict:
    return {"customer": row.number, "name": row.name, "email": row.email, "credit_hold": row.credit_hold}


def _product(row: LegacyProduct) -> dict:
    return {"sku": row.sku, "name": row.name, "price": money(row.price), "stock": row.stock}


class MockErpAdapter(LegacyAdapter):
    name = "mock-erp"

    def __init__(self, org):
        self.org = org

    # Reads.

    def customer_get(self, number: str) -> dict | None:
        row = LegacyCustomer.objects.filter(org=self.org, number=number).first()
        return _customer(row) if row else None

    def customer_search(self, query: str, limit: int = 10) -> list[dict]:
        rows = LegacyCustomer.objects.filter(org=self.org).filter(
            Q(name__icontains=query) | Q(email__iexact=query) | Q(number__iexact=query)
        )
        return [_customer(row) for row in rows[:limit]]

    def product_get(self, sku: str) -> dict | None:
        row = LegacyProduct.objects.filter(org=self.org, sku=sku).first()
        return _product(row) if row else None

    def product_search(self, query: str, limit: int = 10) -> list[dict]:
        rows = LegacyProduct.objects.filter(org=self.org).filter(Q(name__icontains=query) | Q(sku__iexact=query))
        return [_product(row) for row in rows[:limit]]

    def order_get(self, number: str) -> dict | None:
        row = LegacyOrder.objects.filter(org=self.org, number=number).select_related("customer").first()
        return self._order(row) if row else None

    def _order(self, order: LegacyOrder) -> dict:
        lines = []
        total = Decimal("0")
        for line in order.lines.select_related("product"):
            amount = line.unit_price * line.quantity
            total += amount
            lines.append({"sku": line.product.sku, "name": line.product.name, "quantity": line.quantity,
                          "unit_price": money(line.unit_price), "amount": money(amount)})
        return {"order": order.number, "customer": order.customer.number, "customer_name": order.customer.name,
                "status": order.status, "reference": order.reference, "lines": lines, "total": money(total)}

    # Writes.

    def _take_stock(self, product: LegacyProduct, quantity: int) -> None:
        taken = LegacyProduct.objects.filter(pk=product.pk, stock__gte=quantity).update(stock=F("stock") - quantity)
        if not taken:
            raise AdapterError(f"Only {LegacyProduct.objects.get(pk=product.pk).stock} of {product.sku} in stock.")

    def _give_stock(self, product_id: int, quantity: int) -> None:
        LegacyProduct.objects.filter(pk=product_id).update(stock=F("stock") + quantity)

    def order_create(self, *, customer: str, lines: list[dict], reference: str, external_ref: str) -> dict:
        existing = LegacyOrder.objects.filter(org=self.org, external_ref=external_ref).select_related("customer").first()
        if existing is not None:
            return self._order(existing)
        buyer = LegacyCustomer.objects.filter(org=self.org, number=customer).first()
        if buyer is None:
            raise AdapterError(f"No customer {customer} in the ERP.")
        wanted: dict[str, int] = {}
        for line in lines:
            wanted[line["sku"]] = wanted.get(line["sku"], 0) + int(line["quantity"])
        products = {p.sku: p for p in LegacyProduct.objects.filter(org=self.org, sku__in=list(wanted))}
        missing = sorted(set(wanted) - set(products))
        if missing:
            raise AdapterError(f"No product {missing[0]} in the ERP.")
        number = "SO-" + hashlib.sha256(f"{self.org.pk}:{external_ref}".encode()).hexdigest()[:10].upper()
        try:
            with transaction.atomic():
                order = LegacyOrder.objects.create(org=self.org, number=number, customer=buyer, reference=reference,
                                                   external_ref=external_ref)
                for sku in sorted(wanted):  # a fixed order of row locks: no deadlock between two orders
                    self._take_stock(products[sku], wanted[sku])
                    LegacyOrderLine.objects.create(order=order, product=products[sku], quantity=wanted[sku],
                                                   unit_price=products[sku].price)
        except IntegrityError:
            existing = LegacyOrder.objects.filter(org=self.org, external_ref=external_ref).select_related("customer").first()
            if existing is None:
                raise
            return self._order(existing)
        return self._order(order)

    def order_line_set_quantity(self, *, order: str, sku: str, quantity: int, external_ref: str) -> dict:
        row = LegacyOrder.objects.select_for_update().filter(org=self.org, number=order).first()
        if row is None:
            raise AdapterError(f"No order {order} in the ERP.")
        if row.status != LegacyOrder.OPEN:
            raise AdapterError(f"Order {order} is {row.status}; only an open order can change.")
        line = LegacyOrderLine.objects.filter(order=row, product__sku=sku).select_related("product").first()
        if line is None:
            raise AdapterError(f"Order {order} has no line for {sku}.")
        previous = line.quantity
        delta = quantity - previous
        if delta > 0:
            self._take_stock(line.product, delta)
        elif delta < 0:
            self._give_stock(line.product_id, -delta)
        LegacyOrderLine.objects.filter(pk=line.pk).update(quantity=quantity)
        row = LegacyOrder.objects.select_related("customer").get(pk=row.pk)
        return {**self._order(row), "sku": sku, "quantity": quantity, "previous_quantity": previous}

    def order_cancel(self, *, order: str, external_ref: str) -> dict:
        row = LegacyOrder.objects.select_for_update().filter(org=self.org, number=order).first()
        if row is None:
            raise AdapterError(f"No order {order} in the ERP.")
        if row.status == LegacyOrder.OPEN:
            for line in row.lines.all():
                self._give_stock(line.product_id, line.quantity)
            LegacyOrder.objects.filter(pk=row.pk).update(status=LegacyOrder.CANCELLED)
        row = LegacyOrder.objects.select_related("customer").get(pk=row.pk)
        return self._order(row)
