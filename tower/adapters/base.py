"""The interface a legacy system implements for Tower.

A real adapter (an ERP over SOAP or XML-RPC, or its database) implements these methods. Reads
return plain dicts with string money ("12.50") and never change anything. Writes take
`external_ref`, the Tower action id: the system must treat a second call with the same ref as the
first one (return the same result, change nothing), so a retried execution can never create twice.
Writes run inside Tower's database transaction when the system is the database (the mock); a remote
system cannot join it, and then the ref is what reconciles a crash between its effect and the receipt.
"""

from abc import ABC, abstractmethod


class AdapterError(Exception):
    """The legacy system refused the request; the message says why, in one sentence."""


class LegacyAdapter(ABC):
    name = "abstract"

    # Reads.
    @abstractmethod
    def customer_get(self, number: str) -> dict | None: ...

    @abstractmethod
    def customer_search(self, query: str, limit: int = 10) -> list[dict]: ...

    @abstractmethod
    def product_get(self, sku: str) -> dict | None: ...

    @abstractmethod
    def product_search(self, query: str, limit: int = 10) -> list[dict]: ...

    @abstractmethod
    def order_get(self, number: str) -> dict | None: ...

    # Writes: each takes the action id as `external_ref` and is idempotent on it.
    @abstractmethod
    def order_create(self, *, customer: str, lines: list[dict], reference: str, external_ref: str) -> dict: ...

    @abstractmethod
    def order_line_set_quantity(self, *, order: str, sku: str, quantity: int, external_ref: str) -> dict: ...

    @abstractmethod
    def order_cancel(self, *, order: str, external_ref: str) -> dict: ...
