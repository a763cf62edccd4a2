"""Beacon's entries for the contract suite (tests/contract/registry.py)."""

from accounts.models import Organization
from beacon.models import Check, SavedReport
from core import clock
from core.ids import new_id


def _check(org: Organization | None) -> Check:
    return Check.objects.create(id=new_id("bcn_"), url="https://example.com/", org=org, status="done",
                                paid_by="free:billing_disabled", created_at=clock.now(), report=None)


def _public_check(tenant) -> dict:
    return {"check_id": _check(tenant.org).id}


def _saved(tenant) -> dict:
    check = _check(tenant.org)
    SavedReport.objects.create(org=tenant.org, check_ref=check, saved_at=clock.now())
    return {"check_id": check.id}


OBJECT_FACTORIES = {
    "/api/v1/beacon/checks/{check_id}": _public_check,
    "/api/v1/beacon/saved/{check_id}": _saved,
}

NOT_TENANT_OWNED = {
    "/api/v1/beacon/checks/{check_id}": "A check's id is its capability: whoever started it (with or without a key) "
                                        "reads the report by id, as the spec's keyless status route says.",
}
