"""Tower's objects for the contract suite (tests/contract/registry.py merges these)."""

from tower import services
from tower.models import Action


def _agent(tenant) -> dict:
    return {"agent_id": str(services.agent_create(org=tenant.org, name="contract", scopes=["*"]).agent.id)}


def _executed_action(tenant) -> dict:
    services.template_load(org=tenant.org)
    agent = services.agent_create(org=tenant.org, name="contract", scopes=["*"]).agent
    outcome = services.action_create(org=tenant.org, agent=agent, operation="create_sales_order",
                                     input={"customer": "C-1002", "lines": [{"sku": "NUT-M8", "quantity": 1}]},
                                     idempotency_key=f"contract-{Action.objects.count()}")
    assert outcome.status == 200, outcome.body
    return {"action_id": outcome.body["id"]}


def _receipt(tenant) -> dict:
    action_id = _executed_action(tenant)["action_id"]
    return {"ref": Action.objects.get(pk=action_id).receipts.order_by("sequence").first().id}


OBJECT_FACTORIES = {
    "/api/v1/tower/agents/{agent_id}": _agent,
    "/api/v1/tower/actions/{action_id}": _executed_action,
    "/api/v1/tower/actions/{action_id}/compensate": _executed_action,
    "/api/v1/tower/receipts/{ref}": _receipt,
}

NOT_TENANT_OWNED: dict = {}
