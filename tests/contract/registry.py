"""How to make an object for every schema path that names one, so the suite can call it.

A route with a path parameter must be registered here: `OBJECT_FACTORIES[path]` creates an object
owned by a tenant (tests.conftest.Tenant) and returns the path parameters that address it. The
suite then proves another tenant gets 404 on it and cannot change it, and uses it for the auth,
scope and error sweeps. test_tenancy fails for a parametrized path that has no factory here.

A path whose parameter is not a tenant's object (a public record, a language code) still needs a
factory, for its parameters, and goes in `NOT_TENANT_OWNED` with the reason another tenant may
read it.

Each product keeps its own entries in `tests/<app>/contract.py`, a module with the same two dicts
(`OBJECT_FACTORIES`, `NOT_TENANT_OWNED`); they are merged here.
"""

import importlib
from collections.abc import Callable

from accounts import services as accounts


def _api_key(tenant) -> dict:
    issued = accounts.api_key_issue(org=tenant.org, name="contract-target")
    return {"key_id": str(issued.key.pk)}


OBJECT_FACTORIES: dict[str, Callable[..., dict]] = {
    "/api/v1/api-keys/{key_id}": _api_key,
}

NOT_TENANT_OWNED: dict[str, str] = {}

for _app in ("accounts", "billing", "guardrails", "atlas", "beacon", "tower", "preflight"):
    try:
        _module = importlib.import_module(f"tests.{_app}.contract")
    except ModuleNotFoundError as exc:
        if exc.name not in (f"tests.{_app}", f"tests.{_app}.contract"):
            raise
        continue
    OBJECT_FACTORIES.update(getattr(_module, "OBJECT_FACTORIES", {}))
    NOT_TENANT_OWNED.update(getattr(_module, "NOT_TENANT_OWNED", {}))


def path_params_for(path: str, tenant) -> dict:
    """The parameters of `path` addressing a fresh object of `tenant` ({} for a path without any)."""
    if "{" not in path:
        return {}
    factory = OBJECT_FACTORIES.get(path)
    assert factory is not None, f"{path} has a path parameter but no factory in tests/contract/registry.py: add one."
    return factory(tenant)
