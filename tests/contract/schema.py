"""The OpenAPI schema as the contract suite reads it: every operation, who may call it, how to call it.

The suite is driven by the schema generated in-process (the same generator that serves
/api/v1/openapi.json), so a route added later is covered without editing the suite.
"""

import functools
import json
from dataclasses import dataclass

from django.urls import resolve
from rest_framework.test import APIClient

WRITE_METHODS = ("post", "put", "patch", "delete")
ALL_METHODS = ("get", "post", "put", "patch", "delete")


@functools.cache
def openapi_schema() -> dict:
    from drf_spectacular.generators import SchemaGenerator

    return SchemaGenerator().get_schema(request=None, public=True)


@dataclass(frozen=True)
class Operation:
    method: str  # lower case, as in the schema
    path: str  # the schema's template, e.g. /api/v1/api-keys/{key_id}
    spec: dict  # the operation object

    def __str__(self) -> str:
        return f"{self.method.upper()} {self.path}"

    @property
    def path_params(self) -> list[str]:
        return [p["name"] for p in self.spec.get("parameters", []) if p["in"] == "path"]

    @property
    def has_body(self) -> bool:
        return "requestBody" in self.spec

    @property
    def view_class(self):
        """The view Django routes this path to (path parameters filled with a placeholder)."""
        return view_class_for(self.path)

    @property
    def view_auth(self) -> str | None:
        """The view's declared key policy (core.api.ApiView.auth), None when the view declares none."""
        return getattr(self.view_class, "auth", None)

    @property
    def view_scope(self) -> str:
        """The view's declared scope; a view that declares none is held to the strictest, "full"."""
        return getattr(self.view_class, "scope", "full")

    @property
    def schema_keyed(self) -> bool:
        """The schema says a key is required: some security requirement, and none of them empty.

        drf-spectacular renders `extend_schema(auth=[])` by leaving `security` out, and an
        optional key as a list that also holds `{}`; a keyed operation lists the ApiKey scheme.
        """
        security = self.spec.get("security")
        return bool(security) and all(requirement for requirement in security)

    @property
    def requires_key(self) -> bool:
        """Keyed by the schema or by the view's declared policy.

        Both are read so that the 401 checks cover every keyed route even while the schema leaves
        out a route's security (test_auth.test_the_schema_declares_which_routes_need_a_key holds
        the two to agreement).
        """
        return self.schema_keyed or self.view_auth == "required"

    def documents(self, status: int) -> bool:
        return str(status) in self.spec.get("responses", {})

    def documented_error_keys(self, status: int) -> set[str]:
        """Keys an error body of this status may carry: "error", plus any the operation documents."""
        response = self.spec.get("responses", {}).get(str(status), {})
        schema = response.get("content", {}).get("application/json", {}).get("schema", {})
        return {"error"} | set(resolve_ref(schema).get("properties", {}))


def resolve_ref(schema: dict) -> dict:
    ref = schema.get("$ref")
    if not ref:
        return schema
    node = openapi_schema()
    for part in ref.removeprefix("#/").split("/"):
        node = node[part]
    return node


@functools.cache
def operations() -> tuple[Operation, ...]:
    found = []
    for path, item in openapi_schema()["paths"].items():
        for method, spec in item.items():
            if method in ALL_METHODS:
                found.append(Operation(method, path, spec))
    return tuple(found)


def operation_ids(operation: Operation) -> str:
    return str(operation)


def keyed_operations() -> list[Operation]:
    return [op for op in operations() if op.requires_key]


def write_operations() -> list[Operation]:
    return [op for op in operations() if op.method in WRITE_METHODS]


def paths() -> dict[str, set[str]]:
    """Every schema path with the methods it documents."""
    found: dict[str, set[str]] = {}
    for op in operations():
        found.setdefault(op.path, set()).add(op.method)
    return found


def parametrized_paths() -> list[str]:
    return sorted({op.path for op in operations() if op.path_params})


def _placeholder(path: str) -> str:
    """The path with a well-formed value for each parameter, to find its view."""
    import re
    import uuid

    parameters = {}
    for op in operations():
        if op.path == path:
            for parameter in op.spec.get("parameters", []):
                if parameter["in"] == "path":
                    schema = parameter.get("schema", {})
                    if schema.get("format") == "uuid":
                        parameters[parameter["name"]] = str(uuid.uuid4())
                    elif schema.get("type") == "integer":
                        parameters[parameter["name"]] = "1"
                    else:
                        parameters[parameter["name"]] = schema.get("example", "x")
    return re.sub(r"{(\w+)}", lambda m: str(parameters.get(m.group(1), "x")), path)


@functools.cache
def view_class_for(path: str):
    match = resolve(_placeholder(path))
    return getattr(match.func, "view_class", None) or getattr(match.func, "cls", None)


def url(path: str, params: dict | None = None) -> str:
    return path.format(**(params or {}))


def keyed_client(key: str | None = None, *, raise_request_exception: bool = True) -> APIClient:
    """A client like a real caller's: CSRF enforced, the key (if any) as a bearer token.

    By default a crash in the app raises in the test, with its traceback; with
    raise_request_exception=False it is the 500 response a caller would get.
    """
    client = APIClient(enforce_csrf_checks=True, raise_request_exception=raise_request_exception)
    if key is not None:
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return client


def call(client: APIClient, method: str, path: str, body=None, **extra):
    """One request; write methods send `body` (JSON-encoded unless already bytes) as application/json."""
    if method in WRITE_METHODS:
        if body is None:
            body = {}
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        extra.setdefault("content_type", "application/json")
        return client.generic(method.upper(), path, data, **extra)
    return client.generic(method.upper(), path, **extra)


def check_error_body(status: int, content_type: str, content: bytes, operation: Operation | None = None) -> dict:
    """An error body is `{"error": "<one sentence>"}` (plus keys the operation documents for that status)."""
    assert content_type.startswith("application/json"), f"{status} error is {content_type!r}, not JSON: {content[:200]!r}"
    body = json.loads(content)
    allowed = operation.documented_error_keys(status) if operation else {"error"}
    assert isinstance(body, dict) and "error" in body and set(body) <= allowed, (
        f"{status} body is not the error envelope: {body!r}"
    )
    assert isinstance(body["error"], str) and body["error"].strip(), f"the error message is empty: {body!r}"
    return body


def check_status(status: int, content: bytes, operation: Operation | None = None) -> None:
    """Never a 500; another 5xx only where the operation documents it (e.g. 503 "not enabled")."""
    assert status != 500, f"500 from {operation}: {content[:500]!r}"
    if status >= 500:
        assert operation is not None and operation.documents(status), f"undocumented {status} from {operation}"


def assert_envelope(response, operation: Operation | None = None) -> dict:
    return check_error_body(response.status_code, response.get("Content-Type", ""), response.content, operation)


def assert_sound(response, operation: Operation | None = None) -> None:
    """No server error, and every error is the envelope."""
    check_status(response.status_code, response.content, operation)
    if response.status_code >= 400:
        assert_envelope(response, operation)
