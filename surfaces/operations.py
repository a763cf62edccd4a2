"""The REST operations an agent calls, as tools: read from the OpenAPI schema, run in-process through Django.

A tool is one operation of the published schema (`/api/v1/openapi.json`): its input schema is the
route's path and query parameters and its JSON body, merged into one object, so it cannot drift from
the REST body. A call builds the request the REST client would send (the caller's own Authorization
header, address and host) and hands it to Django's handler in this process: the route's view declares
the policy (key, scope, metering through billing.metering, idempotency), validates with its
serializers and calls its service function, and its error message becomes the tool error.
"""

import copy
import dataclasses
import io
import json
import re
import sys
from dataclasses import dataclass, field
from functools import cache
from urllib.parse import quote, urlencode

from django.conf import settings

# Routes that are not tools, and why. The parity test fails for a schema route neither here nor a tool.
EXCLUDED_PREFIXES = {
    "/api/x402/": "pay-per-use answers 402 and takes a payment header: an HTTP handshake, not a tool call",
    "/api/v1/atlas/ingest/": "takes an ingest key issued to scanners, not an organization's key",
}
EXCLUDED_OPERATIONS: dict[tuple[str, str], str] = {
    ("POST", "/api/v1/billing/webhooks/stripe"): "called by Stripe and signed with its secret, never by an agent",
}

# Shorter names for the operations agents call most; every other tool is named by its operationId.
TOOL_NAMES = {
    "evaluate_create": "evaluate",
    "evaluate_batch_create": "evaluate_batch",
    "atlas_lookup_retrieve": "atlas_lookup",
    "atlas_lookup_verify_create": "atlas_lookup_verify",
    "tower_capabilities_retrieve": "tower_capabilities",
    "tower_decide_create": "tower_decide",
    "tower_actions_create": "tower_action_create",
    "preflight_checks_create": "preflight_check",
    "beacon_checks_create": "beacon_check_start",
    "plans_retrieve": "plans",
    "me_retrieve": "me",
    "usage_retrieve": "usage",
}

HTTP_METHODS = ("get", "post", "put", "patch", "delete")
_TOOL_NAME = re.compile(r"[^A-Za-z0-9_-]")


@dataclass(frozen=True)
class Operation:
    """One REST operation as a tool: where each argument goes, and the JSON Schema of the arguments."""

    name: str
    method: str
    path: str
    operation_id: str
    description: str
    input_schema: dict
    path_params: tuple[str, ...] = ()
    query_params: tuple[str, ...] = ()
    header_params: dict = field(default_factory=dict)  # argument name -> HTTP header
    body_params: tuple[str, ...] = ()
    whole_body: bool = False  # the body is not an object of fields: it is the `body` argument
    keyless: bool = False

    @property
    def annotations(self) -> dict:
        read_only = self.method == "GET"
        return {"readOnlyHint": read_only, "destructiveHint": self.method == "DELETE",
                "idempotentHint": self.method in ("GET", "PUT", "DELETE"), "openWorldHint": False}


@dataclass
class Outcome:
    """What the route answered."""

    status: int
    content_type: str
    body: object  # parsed JSON, or text
    headers: dict

    @property
    def is_error(self) -> bool:
        return self.status >= 400

    @property
    def message(self) -> str:
        """The error message exactly as the REST route sends it."""
        if isinstance(self.body, dict) and isinstance(self.body.get("error"), str):
            return self.body["error"]
        return str(self.body) if self.body else f"The route answered {self.status}."


def openapi_schema() -> dict:
    """The published schema, generated once per process (the same one /api/v1/openapi.json serves)."""
    return _openapi_schema()


@cache
def _openapi_schema() -> dict:
    from drf_spectacular.generators import SchemaGenerator

    return SchemaGenerator().get_schema(request=None, public=True)


def excluded_reason(method: str, path: str) -> str | None:
    for prefix, reason in EXCLUDED_PREFIXES.items():
        if path.startswith(prefix):
            return reason
    return EXCLUDED_OPERATIONS.get((method.upper(), path))


_NUMERIC_KEYWORDS = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}


def _resolve(node, components: dict, seen: tuple = ()):
    """The schema with every `$ref` inlined (a tool's input schema stands alone); a cycle becomes an object."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/components/schemas/"):
            name = ref.rsplit("/", 1)[-1]
            if name in seen:
                return {"type": "object"}
            return _resolve(components.get(name, {"type": "object"}), components, (*seen, name))
        resolved = {key: _resolve(value, components, seen) for key, value in node.items() if key != "readOnly"}
        for key in _NUMERIC_KEYWORDS & resolved.keys():  # a Decimal bound arrives as a string: JSON Schema needs a number
            if isinstance(resolved[key], str):
                try:
                    resolved[key] = int(resolved[key])
                except ValueError:
                    resolved[key] = float(resolved[key])
        return resolved
    if isinstance(node, list):
        return [_resolve(value, components, seen) for value in node]
    return node


def _argument_name(header: str) -> str:
    return header.lower().replace("-", "_")


def operation_from_schema(method: str, path: str, spec: dict, components: dict) -> Operation:
    operation_id = spec.get("operationId") or f"{method}_{path}"
    name = _TOOL_NAME.sub("_", TOOL_NAMES.get(operation_id, operation_id))[:64]
    properties: dict = {}
    required: list[str] = []
    path_params, query_params, header_params, body_params = [], [], {}, []
    for parameter in spec.get("parameters", []):
        where, pname = parameter.get("in"), parameter["name"]
        if where == "header":
            arg = _argument_name(pname)
            header_params[arg] = pname
        elif where in ("path", "query"):
            arg = pname
            (path_params if where == "path" else query_params).append(pname)
        else:
            continue
        schema = _resolve(parameter.get("schema", {"type": "string"}), components)
        if parameter.get("description"):
            schema = {**schema, "description": parameter["description"]}
        properties[arg] = schema
        if parameter.get("required") or where == "path":
            required.append(arg)
    whole_body = False
    content = spec.get("requestBody", {}).get("content", {})
    body_schema = content.get("application/json", {}).get("schema") if content else None
    if body_schema is not None:
        body = _resolve(body_schema, components)
        if body.get("type", "object") == "object" and body.get("properties"):
            for pname, pschema in body["properties"].items():
                properties.setdefault(pname, pschema)
                body_params.append(pname)
            if spec["requestBody"].get("required", False) or body.get("required"):
                required.extend(n for n in body.get("required", []) if n not in required)
        else:
            whole_body = True
            properties["body"] = body
            if spec["requestBody"].get("required"):
                required.append("body")
    description = (spec.get("description") or spec.get("summary") or "").strip()
    errors = sorted(code for code in spec.get("responses", {}) if code.isdigit() and int(code) >= 400)
    if errors:
        description = f"{description}\n\nErrors (tool errors with the REST message): {', '.join(errors)}."
    description = f"{description}\n\nREST: {method.upper()} {path}".strip()
    input_schema: dict = {"type": "object", "properties": properties}
    if required:
        input_schema["required"] = required
    security = spec.get("security")
    return Operation(
        name=name, method=method.upper(), path=path, operation_id=operation_id, description=description,
        input_schema=input_schema, path_params=tuple(path_params), query_params=tuple(query_params),
        header_params=header_params, body_params=tuple(body_params), whole_body=whole_body,
        keyless=security is None or {} in security,
    )


def operations() -> list[Operation]:
    """Every tool, in the schema's order (a stable list)."""
    return list(_operations().values())


def operation(name: str) -> Operation | None:
    return _operations().get(name)


@cache
def _operations() -> dict[str, Operation]:
    schema = openapi_schema()
    components = schema.get("components", {}).get("schemas", {})
    found: dict[str, Operation] = {}
    for path, item in schema.get("paths", {}).items():
        for method in HTTP_METHODS:
            spec = item.get(method)
            if spec is None or excluded_reason(method, path):
                continue
            op = operation_from_schema(method, path, spec, components)
            if op.name in found:  # a short name taken twice: the operationId is unique in the schema
                op = dataclasses.replace(op, name=_TOOL_NAME.sub("_", op.operation_id)[:64])
            found[op.name] = op
    return found


# Running an operation in-process.


@dataclass(frozen=True)
class Caller:
    """What the REST request would have carried: the caller's headers and address."""

    authorization: str | None = None
    client_address: str = "127.0.0.1"
    forwarded_for: str | None = None
    host: str = ""
    scheme: str = "http"
    user_agent: str = ""

    def meta(self) -> dict:
        meta = {"REMOTE_ADDR": self.client_address}
        if self.forwarded_for:
            meta["HTTP_X_FORWARDED_FOR"] = self.forwarded_for
        return meta

    @classmethod
    def from_headers(cls, headers, client_address: str | None, scheme: str = "http") -> "Caller":
        get = headers.get
        return cls(authorization=get("authorization"), client_address=client_address or "unknown",
                   forwarded_for=get("x-forwarded-for"), host=get("host") or "", scheme=scheme,
                   user_agent=get("user-agent") or "")


class ArgumentError(ValueError):
    """Arguments that cannot even be placed in a request (the route validates the rest)."""


def _query_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _request_parts(op: Operation, arguments: dict) -> tuple[str, str, bytes | None, dict]:
    arguments = dict(arguments or {})
    path = op.path
    for pname in op.path_params:
        if pname not in arguments or arguments[pname] in (None, ""):
            raise ArgumentError(f"{pname}: This field is required.")
        path = path.replace("{" + pname + "}", quote(str(arguments.pop(pname)), safe=""))
    query = []
    for pname in op.query_params:
        value = arguments.pop(pname, None)
        if value is None:
            continue
        for item in value if isinstance(value, list) else [value]:
            query.append((pname, _query_value(item)))
    headers = {}
    for arg, header in op.header_params.items():
        value = arguments.pop(arg, None)
        if value is not None:
            headers[header] = str(value)
    body = None
    if op.whole_body:
        body = json.dumps(arguments.get("body", {})).encode()
    elif op.body_params or op.method in ("POST", "PUT", "PATCH"):
        # Unknown names go along too: the route's serializer decides about them, as it would over REST.
        body = json.dumps(arguments).encode() if (arguments or op.method != "DELETE") else None
    return path, urlencode(query), body, headers


def _handler():
    from django.core.handlers.wsgi import WSGIHandler

    global _HANDLER
    if _HANDLER is None:
        _HANDLER = WSGIHandler()
    return _HANDLER


_HANDLER = None


def _host_and_port(caller: Caller) -> tuple[str, str, str]:
    host = caller.host or settings.BASE_URL.split("://", 1)[-1].split("/", 1)[0]
    name, _, port = host.rpartition(":") if host.count(":") == 1 else (host, "", "")
    return host, name or host, port or ("443" if caller.scheme == "https" else "80")


def operation_call(op: Operation, arguments: dict, caller: Caller) -> Outcome:
    """Run the operation as its REST route, in this thread (a synchronous call: run it off the event loop)."""
    path, query_string, body, extra_headers = _request_parts(op, arguments)
    host, server_name, server_port = _host_and_port(caller)
    environ = {
        "REQUEST_METHOD": op.method,
        "SCRIPT_NAME": "",
        "PATH_INFO": path,
        "QUERY_STRING": query_string,
        "SERVER_NAME": server_name,
        "SERVER_PORT": server_port,
        "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_HOST": host,
        "HTTP_ACCEPT": "application/json",
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": caller.scheme,
        "wsgi.input": io.BytesIO(body or b""),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
        **caller.meta(),
    }
    if body is not None:
        environ["CONTENT_TYPE"] = "application/json"
        environ["CONTENT_LENGTH"] = str(len(body))
    if caller.authorization:
        environ["HTTP_AUTHORIZATION"] = caller.authorization
    if caller.user_agent:
        environ["HTTP_USER_AGENT"] = caller.user_agent
    for header, value in extra_headers.items():
        environ["HTTP_" + header.upper().replace("-", "_")] = value

    status_line = {}

    def start_response(status, headers, exc_info=None):
        status_line["status"], status_line["headers"] = status, headers

    response = _handler()(environ, start_response)
    try:
        raw = b"".join(response)
    finally:
        close = getattr(response, "close", None)
        if close:
            close()
    status = int(status_line["status"].split(" ", 1)[0])
    headers = {name: value for name, value in status_line["headers"]}
    content_type = headers.get("Content-Type", "")
    text = raw.decode("utf-8", errors="replace")
    parsed: object = text
    if "json" in content_type and text:
        try:
            parsed = json.loads(text)
        except ValueError:
            pass
    return Outcome(status=status, content_type=content_type, body=parsed, headers=headers)


# Response headers a tool result carries along (limits, credits, replays), under its _meta.
PASSED_HEADERS = re.compile(r"^(x-ratelimit-|x-burst-|x-credits-|x-quota-|x-atlas-lookup-|retry-after$|idempotency-replayed$|x-request-id$)", re.I)


def passed_headers(outcome: Outcome) -> dict:
    return {name: value for name, value in outcome.headers.items() if PASSED_HEADERS.match(name)}


def input_schema_copy(op: Operation) -> dict:
    return copy.deepcopy(op.input_schema)
