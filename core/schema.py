"""Shared OpenAPI pieces: the error envelope and the standard error responses."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
from drf_spectacular.utils import OpenApiResponse, inline_serializer
from rest_framework import serializers


class ErrorOut(serializers.Serializer):
    """Every error body (Tower documents its own)."""

    error = serializers.CharField(help_text="One sentence saying what is wrong.")


_MEANINGS = {
    400: "Invalid input: the message names the field or value.",
    401: "Missing or invalid API key.",
    402: "Payment needed.",
    403: "The key's scope does not allow this route.",
    404: "Not found.",
    409: "Conflicts with the current state.",
    413: "Request body too large.",
    415: "Unsupported media type; send application/json.",
    422: "Cannot be processed.",
    429: "Limit reached; see Retry-After.",
    502: "An upstream component failed.",
    503: "Not enabled on this service.",
}


def errors(*codes: int, **described: str) -> dict:
    """`responses` entries for the given statuses, e.g. errors(400, 401, 409, s409="Slug taken.")."""
    out = {}
    for code in codes:
        text = described.get(f"s{code}", _MEANINGS.get(code, "Error."))
        out[code] = OpenApiResponse(ErrorOut, description=text)
    return out


def obj(name: str, **fields) -> serializers.Serializer:
    """A small named response shape, for the schema only."""
    return inline_serializer(name=name, fields=fields)


class ApiKeyScheme(OpenApiAuthenticationExtension):
    """The organization key, as drf-spectacular documents it."""

    target_class = "accounts.auth.ApiKeyAuthentication"
    name = "ApiKey"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "An organization key, `svc_live_…`, from POST /api/v1/signup. Send `Authorization: Bearer <API_KEY>`.",
        }


class AutoSchema(SpectacularAutoSchema):
    """Security from the view's declared policy: `auth` required, optional (a key or none) or none."""

    def _get_request_body(self, direction="request"):
        # A DELETE that declares a body (DELETE /api/v1/org takes `confirm`) documents it like a POST.
        declared = "get_request_serializer" in type(self).__dict__  # set by @extend_schema(request=...)
        if self.method == "DELETE" and declared and self.get_request_serializer() is not None:
            self.method = "POST"
            try:
                return super()._get_request_body(direction)
            finally:
                self.method = "DELETE"
        return super()._get_request_body(direction)

    def get_auth(self):
        policy = getattr(self.view, "auth", None)
        if policy == "none":
            return []
        schemes = super().get_auth()
        keyed = [entry for entry in schemes if entry]
        if policy == "optional":
            return keyed + [{}]
        return keyed
