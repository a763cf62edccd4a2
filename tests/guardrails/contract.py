"""Objects for the contract suite: an evaluation and a custom rule set of a tenant."""

import secrets

from guardrails import services


def _evaluation(tenant) -> dict:
    body = services.evaluation_create(org=tenant.org, input="Please confirm the delivery for Tuesday.")
    return {"evaluation_id": body["id"]}


def _rule_set(tenant) -> dict:
    slug = "contract-" + secrets.token_hex(4)
    services.rule_set_create(org=tenant.org, slug=slug, rules=[{"detector": "secrets", "action": "block"}])
    return {"slug": slug}


OBJECT_FACTORIES = {
    "/api/v1/evaluations/{evaluation_id}": _evaluation,
    "/api/v1/rule-sets/{slug}": _rule_set,
}

NOT_TENANT_OWNED: dict[str, str] = {}
