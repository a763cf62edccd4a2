"""Shared OpenAPI pieces: the error envelope and the standard error responses."""

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
