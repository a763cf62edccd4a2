"""Objects for the contract suite: registrations are the organization's; registry entries and datasets are public."""

from atlas import services
from atlas.models import Registration


def _registration(tenant) -> dict:
    registration = services.registration_create(
        org=tenant.org, name=f"Contract Agent {tenant.org.pk.hex[:8]}", operator=f"Contract Operator {tenant.org.pk.hex[:8]}",
        domain=f"contract-{tenant.org.pk.hex[:12]}.com", tokens=[f"ContractBot{tenant.org.pk.hex[:8]}"],
    )
    return {"registration_id": registration.id}


def _verified_registration(tenant) -> dict:
    # Held for review: verify answers from the database (no DNS lookup leaves the test).
    params = _registration(tenant)
    Registration.objects.filter(pk=params["registration_id"]).update(status=Registration.PENDING_REVIEW)
    return params


OBJECT_FACTORIES = {
    "/api/v1/atlas/registrations/{registration_id}": _registration,
    "/api/v1/atlas/registrations/{registration_id}/verify": _verified_registration,
    "/api/v1/atlas/agents/{slug}": lambda tenant: {"slug": "gptbot"},
    "/api/v1/atlas/datasets/{dataset_id}": lambda tenant: {"dataset_id": "traffic-shares"},
}

NOT_TENANT_OWNED = {
    "/api/v1/atlas/agents/{slug}": "public registry entry",
    "/api/v1/atlas/datasets/{dataset_id}": "public dataset (the free traffic-shares one)",
}
