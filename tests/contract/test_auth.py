"""Keys, for every route in the schema: none or a bad one is 401, a revoked one is 401 at once,
an evaluate-scope key is 403 on full-scope routes."""

import pytest

from accounts.models import Organization
from accounts.services import api_key_issue
from tests.contract import registry
from tests.contract.schema import (
    assert_envelope,
    assert_sound,
    call,
    keyed_client,
    keyed_operations,
    operation_ids,
    operations,
    url,
)

pytestmark = pytest.mark.django_db

BAD_KEYS = {
    "unknown key": "Bearer svc_live_" + "x" * 43,
    "wrong prefix": "Bearer sk_live_abcdef",
    "wrong scheme": "Basic c3ZjX2xpdmVfeDp4",
    "no token": "Bearer ",
    "overlong": "Bearer svc_live_" + "x" * 300,
    # What a server hands Django for UTF-8 bytes in the header: each byte as one latin-1 character.
    "utf-8 bytes": "Bearer svc_live_" + "\u2603".encode().decode("latin-1"),
}


def test_the_schema_has_keyed_and_keyless_routes():
    keyed = keyed_operations()
    assert keyed and len(keyed) < len(operations())


def test_the_schema_declares_which_routes_need_a_key():
    disagreements = [
        f"{op}: view auth={op.view_auth!r}, schema security={op.spec.get('security')!r}"
        for op in operations()
        if op.view_auth is not None and op.schema_keyed != (op.view_auth == "required")
    ]
    assert not disagreements, "\n".join(disagreements)


@pytest.mark.parametrize("op", operations(), ids=operation_ids)
def test_without_a_key_a_keyed_route_is_401_and_no_route_fails(op, alice):
    response = call(keyed_client(), op.method, url(op.path, registry.path_params_for(op.path, alice)))
    assert_sound(response, op)
    if op.requires_key:
        assert response.status_code == 401
        assert set(assert_envelope(response)) == {"error"}


@pytest.mark.parametrize("op", keyed_operations(), ids=operation_ids)
def test_without_a_key_the_401_names_the_bearer_scheme(op, alice):
    response = call(keyed_client(), op.method, url(op.path, registry.path_params_for(op.path, alice)))
    assert response.status_code == 401
    assert response.get("WWW-Authenticate", "").lower().startswith("bearer")


@pytest.mark.parametrize("bad", BAD_KEYS.values(), ids=BAD_KEYS.keys())
@pytest.mark.parametrize("op", keyed_operations(), ids=operation_ids)
def test_a_bad_key_is_401_with_the_envelope_and_the_bearer_scheme(op, bad, alice):
    client = keyed_client()
    client.credentials(HTTP_AUTHORIZATION=bad)
    response = call(client, op.method, url(op.path, registry.path_params_for(op.path, alice)))
    assert response.status_code == 401
    assert set(assert_envelope(response)) == {"error"}
    assert response["WWW-Authenticate"].lower().startswith("bearer")


def test_a_revoked_key_is_401_at_once_on_every_keyed_route(alice):
    doomed = api_key_issue(org=alice.org, name="doomed")
    assert keyed_client(doomed.raw).get("/api/v1/me").status_code == 200
    revoked = keyed_client(alice.key).delete(f"/api/v1/api-keys/{doomed.key.pk}")
    assert revoked.status_code == 200

    client = keyed_client(doomed.raw)
    failures = []
    for op in keyed_operations():
        response = call(client, op.method, url(op.path, registry.path_params_for(op.path, alice)))
        if response.status_code != 401:
            failures.append(f"{op}: {response.status_code} {response.content[:200]!r}")
            continue
        assert set(assert_envelope(response)) == {"error"}
        assert response["WWW-Authenticate"].lower().startswith("bearer")
    assert not failures, "a revoked key was accepted:\n" + "\n".join(failures)
    assert Organization.objects.filter(pk=alice.org.pk).exists()


# Scopes: an evaluate-scope key may use "evaluate" routes only.


@pytest.fixture
def evaluate_key(alice) -> str:
    return api_key_issue(org=alice.org, name="evaluate-only", scope="evaluate").raw


@pytest.mark.parametrize(
    "method, path",
    [
        ("get", "/api/v1/org"),
        ("patch", "/api/v1/org"),
        ("delete", "/api/v1/org"),
        ("get", "/api/v1/api-keys"),
        ("post", "/api/v1/api-keys"),
    ],
)
def test_an_evaluate_key_is_403_on_the_account_routes(method, path, alice, evaluate_key):
    response = call(keyed_client(evaluate_key), method, path, {"confirm": "alice", "name": "x"})
    assert response.status_code == 403
    assert set(assert_envelope(response)) == {"error"}
    assert Organization.objects.filter(pk=alice.org.pk).exists()


def test_an_evaluate_key_may_ask_who_it_is(alice, evaluate_key):
    response = keyed_client(evaluate_key).get("/api/v1/me")
    assert response.status_code == 200
    assert response.json()["key"]["scope"] == "evaluate"


@pytest.mark.parametrize("op", keyed_operations(), ids=operation_ids)
def test_an_evaluate_key_gets_exactly_the_routes_its_scope_allows(op, alice, evaluate_key):
    response = call(keyed_client(evaluate_key), op.method, url(op.path, registry.path_params_for(op.path, alice)))
    assert_sound(response, op)
    if op.view_scope == "evaluate":
        assert response.status_code not in (401, 403), response.content
    else:
        assert response.status_code == 403
        assert "scope" in assert_envelope(response)["error"]
    assert Organization.objects.filter(pk=alice.org.pk).exists()
