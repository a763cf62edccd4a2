"""Tenancy, for every route that names an object: bob gets 404 on alice's, and alice's stays as it was."""

import pytest
from django.apps import apps
from django.core import serializers

from tests.conftest import make_tenant
from tests.contract import registry
from tests.contract.schema import assert_envelope, call, keyed_client, operations, parametrized_paths, paths, url

pytestmark = pytest.mark.django_db


def test_every_path_that_names_an_object_has_a_factory():
    missing = [path for path in parametrized_paths() if path not in registry.OBJECT_FACTORIES]
    assert not missing, (
        "These routes take a path parameter but tests/contract/registry.py has no factory for them, so the "
        "suite cannot prove another tenant gets 404 there. Add one to OBJECT_FACTORIES: " + ", ".join(missing)
    )


def test_the_registry_names_only_routes_that_exist():
    stale = (set(registry.OBJECT_FACTORIES) | set(registry.NOT_TENANT_OWNED)) - set(paths())
    assert not stale, f"tests/contract/registry.py names routes the schema no longer has: {sorted(stale)}"


def test_the_registry_covers_the_api_key_route():
    # The suite must not pass vacuously: today's one object route is in the schema and registered.
    assert "/api/v1/api-keys/{key_id}" in parametrized_paths()


def _rows_not_of(org) -> set[str]:
    """Every row of every model that is not the organization `org` or owned by it, serialized."""
    rows = set()
    for model in apps.get_models():
        if model._meta.app_label in {"contenttypes", "sessions", "admin"}:
            continue
        queryset = model.objects.all()
        if model._meta.label == "accounts.Organization":
            queryset = queryset.exclude(pk=org.pk)
        elif any(field.name == "org" for field in model._meta.get_fields()):
            queryset = queryset.exclude(org=org)
        rows.update(serializers.serialize("json", [row]) for row in queryset)
    return rows


@pytest.mark.parametrize("path", [p for p in parametrized_paths() if p not in registry.NOT_TENANT_OWNED])
def test_another_tenant_gets_404_on_an_object_and_cannot_change_it(path, alice, bob):
    alice_params = registry.path_params_for(path, alice)
    # The same kind of object, gone: bob's answer on alice's object must not differ from it.
    carol = make_tenant("carol")
    gone_params = registry.path_params_for(path, carol)
    carol.org.delete()

    bob_client = keyed_client(bob.key)
    assert bob_client.get("/api/v1/me").status_code == 200  # bob's key is now used; nothing of his changes below
    before = _rows_not_of(bob.org)
    methods = sorted(paths()[path])
    for method in methods:
        on_alices = call(bob_client, method, url(path, alice_params))
        assert on_alices.status_code == 404, f"{method.upper()} {path}: bob got {on_alices.status_code} on alice's object"
        body = assert_envelope(on_alices)
        on_gone = call(bob_client, method, url(path, gone_params))
        assert (on_gone.status_code, assert_envelope(on_gone)) == (404, body), "alice's object is distinguishable"
    assert _rows_not_of(bob.org) == before, "bob's requests changed data that is not his"

    # And alice herself can still reach it (the 404 was tenancy, not a dead object).
    first = next(op for op in operations() if op.path == path and op.method == methods[0])
    mine = call(keyed_client(alice.key), first.method, url(path, alice_params))
    assert mine.status_code < 400, f"{first}: alice got {mine.status_code} on her own object"
