"""Tower test helpers: an organization with the starter workflow, agents and their clients."""

from rest_framework.test import APIClient

from tower import services


def agent_client(tenant, scopes=("*",), name="order-bot"):
    issued = services.agent_create(org=tenant.org, name=name, scopes=list(scopes))
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {issued.raw}")
    client.agent = issued.agent
    client.key = issued.raw
    return client


def small_order(customer="C-1001", quantity=10, sku="BOLT-M8") -> dict:
    return {"customer": customer, "lines": [{"sku": sku, "quantity": quantity}], "reference": "PO-1"}


def act(client, operation, input, key, dry_run=False):
    return client.post("/api/v1/tower/actions", {"operation": operation, "input": input, "idempotency_key": key,
                                                 "dry_run": dry_run}, format="json")
