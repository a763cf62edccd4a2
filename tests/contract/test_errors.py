"""The error envelope, for every route in the schema: garbage bodies, unknown routes, wrong methods."""

import json

import pytest
from django.conf import settings

from tests.contract import registry
from tests.contract.schema import (
    ALL_METHODS,
    assert_envelope,
    assert_sound,
    call,
    keyed_client,
    operation_ids,
    paths,
    resolve_ref,
    url,
    write_operations,
)

pytestmark = pytest.mark.django_db

# Bodies no route can make sense of, sent as application/json. A route that reads a body must
# answer 400; one that reads none may succeed; none may fail or answer outside the envelope.
GARBAGE = {
    "malformed json": b'{"name": ',
    "json array": b'[{"name": "x"}, 1]',
    "json scalar": b'"just a string"',
    "invalid utf-8": b'{"name": "\xff\xfe\xc3\x28"}',
}


@pytest.mark.parametrize("garbage", GARBAGE.values(), ids=GARBAGE.keys())
@pytest.mark.parametrize("op", write_operations(), ids=operation_ids)
def test_a_garbage_body_is_a_400_envelope_never_a_crash(op, garbage, alice):
    response = call(keyed_client(alice.key), op.method, url(op.path, registry.path_params_for(op.path, alice)), garbage)
    assert_sound(response, op)
    if op.has_body:
        assert response.status_code == 400, response.content
        assert set(assert_envelope(response)) == {"error"}


def _deep(depth: int) -> bytes:
    return b'{"name": ' * depth + b"1" + b"}" * depth


@pytest.mark.parametrize("depth", [1_500, 20_000])
@pytest.mark.parametrize("op", write_operations(), ids=operation_ids)
def test_a_deeply_nested_body_is_a_400_envelope_never_a_crash(op, depth, alice):
    # Nesting past the interpreter's recursion limit once crashed the JSON parser (a 500 from 3 KB).
    target = url(op.path, registry.path_params_for(op.path, alice))
    response = call(keyed_client(alice.key, raise_request_exception=False), op.method, target, _deep(depth))
    assert_sound(response, op)
    if op.has_body:
        assert response.status_code == 400, response.content
        assert set(assert_envelope(response)) == {"error"}


def _string_fields(op) -> list[str]:
    content = op.spec.get("requestBody", {}).get("content", {}).get("application/json", {})
    properties = resolve_ref(content.get("schema", {})).get("properties", {})
    return [name for name, field in properties.items() if field.get("type") == "string"] or ["name"]


BAD_STRINGS = {
    "nul": "a\u0000b",
    "lone surrogate": "a\ud800b",
    "private use and bidi": "\ue000\u202e\ufeff",
    "very long": "x" * 100_000,
}


@pytest.mark.parametrize("text", BAD_STRINGS.values(), ids=BAD_STRINGS.keys())
@pytest.mark.parametrize("op", [op for op in write_operations() if op.has_body], ids=operation_ids)
def test_bad_unicode_in_every_string_field_is_never_a_crash(op, text, alice):
    body = {name: text for name in _string_fields(op)}
    target = url(op.path, registry.path_params_for(op.path, alice))
    response = call(keyed_client(alice.key), op.method, target, json.dumps(body).encode())
    assert_sound(response, op)


@pytest.mark.parametrize("op", write_operations(), ids=operation_ids)
def test_a_body_over_the_cap_is_a_413_envelope(op, alice):
    huge = b'{"name": "' + b"x" * settings.MAX_BODY_BYTES + b'"}'
    response = call(keyed_client(alice.key), op.method, url(op.path, registry.path_params_for(op.path, alice)), huge)
    assert response.status_code == 413
    assert set(assert_envelope(response)) == {"error"}


@pytest.mark.parametrize("op", write_operations(), ids=operation_ids)
def test_a_body_over_the_cap_is_a_413_even_without_a_key(op, alice):
    huge = b"[" + b"0," * (settings.MAX_BODY_BYTES // 2) + b"0]"
    response = call(keyed_client(), op.method, url(op.path, registry.path_params_for(op.path, alice)), huge)
    assert response.status_code == 413
    assert set(assert_envelope(response)) == {"error"}


@pytest.mark.parametrize("op", [op for op in write_operations() if op.has_body], ids=operation_ids)
def test_a_form_body_is_a_415_envelope(op, alice):
    response = call(
        keyed_client(alice.key),
        op.method,
        url(op.path, registry.path_params_for(op.path, alice)),
        b"name=x&confirm=alice",
        content_type="application/x-www-form-urlencoded",
    )
    assert response.status_code == 415
    assert set(assert_envelope(response)) == {"error"}


UNKNOWN_PATHS = [
    "/api/v1/no-such-route",
    "/api/v1/me/",
    "/api/v1/me/extra",
    "/api/v2/me",
    "/api/v1/api-keys/not-a-uuid",
    "/api/v1/api-keys/00000000-0000-0000-0000-000000000000/extra",
    "/api/v1/%ff%fe",
    "/api/v1/" + "a" * 4000,
    "/no-such-page",
]


@pytest.mark.parametrize("method", ALL_METHODS)
@pytest.mark.parametrize("path", UNKNOWN_PATHS)
@pytest.mark.parametrize("keyed", [True, False], ids=["with key", "without key"])
def test_an_unknown_route_is_a_404_envelope(path, method, keyed, alice):
    response = call(keyed_client(alice.key if keyed else None), method, path)
    assert response.status_code == 404
    assert set(assert_envelope(response)) == {"error"}


@pytest.mark.parametrize("path", sorted(paths()))
def test_a_method_the_schema_does_not_list_is_a_405_envelope(path, alice):
    documented = paths()[path]
    target = url(path, registry.path_params_for(path, alice))
    for method in set(ALL_METHODS) - documented:
        response = call(keyed_client(alice.key), method, target)
        assert response.status_code == 405, f"{method.upper()} {path}: {response.status_code}"
        assert set(assert_envelope(response)) == {"error"}
        allowed = {m.strip().lower() for m in response["Allow"].split(",")}
        assert documented <= allowed, f"{method.upper()} {path}: Allow is {response['Allow']}"
