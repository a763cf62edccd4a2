"""Domain errors and the one place that renders every error as `{"error": "<message>"}`.

Services raise these; the DRF exception handler and Django's own error views turn them (and
everything DRF or Django raises) into the envelope with the status the spec gives.
"""

import logging

from django.core.exceptions import PermissionDenied, RequestDataTooBig, SuspiciousOperation
from django.http import Http404, JsonResponse
from rest_framework import exceptions as drf
from rest_framework.response import Response

log = logging.getLogger(__name__)


class ApiError(Exception):
    """An error with an HTTP status and a one-sentence message; `extra` adds documented keys."""

    status = 400
    default_message = "The request is invalid."

    def __init__(self, message: str | None = None, *, extra: dict | None = None, headers: dict | None = None):
        self.message = message or self.default_message
        self.extra = extra or {}
        self.headers = headers or {}
        super().__init__(self.message)


class BadRequest(ApiError):
    status = 400


class Unauthorized(ApiError):
    status = 401
    default_message = "A valid API key is required: send Authorization: Bearer <API_KEY>."


class PaymentRequired(ApiError):
    status = 402
    default_message = "Payment is required."


class Forbidden(ApiError):
    status = 403
    default_message = "This key is not allowed to use this route."


class NotFound(ApiError):
    status = 404
    default_message = "Not found."


class Conflict(ApiError):
    status = 409
    default_message = "The request conflicts with the current state."


class PayloadTooLarge(ApiError):
    status = 413
    default_message = "The request body is too large."


class Unprocessable(ApiError):
    status = 422
    default_message = "The request cannot be processed."


class TooManyRequests(ApiError):
    status = 429
    default_message = "Too many requests."

    def __init__(self, message: str | None = None, *, retry_after: int = 60, **kwargs):
        super().__init__(message, **kwargs)
        self.headers.setdefault("Retry-After", str(max(1, int(retry_after))))


class BadGateway(ApiError):
    status = 502
    default_message = "An upstream component failed."


class ServiceUnavailable(ApiError):
    status = 503
    default_message = "This function is not enabled on this service."


def error_body(message: str, **extra) -> dict:
    return {"error": message, **extra}


def _first_validation_message(detail, path: str = "") -> tuple[str, str]:
    """The first message of a DRF validation error, with the name of its field (`items[1].input`)."""
    if isinstance(detail, dict):
        for key, value in detail.items():
            if not value:
                continue
            if isinstance(key, int):  # a ListField's or DictField's child, by position
                return _first_validation_message(value, f"{path}[{key}]")
            name = key if key != "non_field_errors" else ""
            return _first_validation_message(value, f"{path}.{name}".strip(".") if name else path)
    if isinstance(detail, list) and detail:
        for index, value in enumerate(detail):
            if isinstance(value, (dict, list)):
                if not value:  # a valid item of a list of objects: no errors here
                    continue
                return _first_validation_message(value, f"{path}[{index}]")
            return _first_validation_message(value, path)
    return str(detail), path


def validation_message(detail) -> tuple[str, str]:
    """One sentence naming the field that is wrong, and that field's name."""
    message, field = _first_validation_message(detail)
    message = message.rstrip(".") + "."
    if field:
        return f"{field}: {message}", field
    return message, field


def exception_handler(exc, context):
    """DRF's exception handler: every error leaves as the envelope."""
    headers: dict = {}
    if isinstance(exc, ApiError):
        status, body, headers = exc.status, error_body(exc.message, **exc.extra), dict(exc.headers)
        if status == 401:
            headers.setdefault("WWW-Authenticate", 'Bearer realm="api"')
    elif isinstance(exc, drf.ValidationError):
        message, _field = validation_message(exc.detail)
        status, body = 400, error_body(message)
    elif isinstance(exc, drf.ParseError):
        status, body = 400, error_body(f"The request body is not valid JSON: {exc.detail}".rstrip(".") + ".")
    elif isinstance(exc, (drf.NotAuthenticated, drf.AuthenticationFailed)):
        status, body = 401, error_body(Unauthorized.default_message)
        headers = {"WWW-Authenticate": 'Bearer realm="api"'}
    elif isinstance(exc, drf.UnsupportedMediaType):
        status, body = 415, error_body(f"{str(exc.detail).rstrip('.')}; send application/json.")
    elif isinstance(exc, drf.APIException):
        status, body = exc.status_code, error_body(str(exc.detail))
        wait = getattr(exc, "wait", None)
        if wait:
            headers["Retry-After"] = str(int(wait))
    elif isinstance(exc, Http404):
        status, body = 404, error_body("Not found.")
    elif isinstance(exc, PermissionDenied):
        status, body = 403, error_body(Forbidden.default_message)
    elif isinstance(exc, RequestDataTooBig):
        status, body = 413, error_body(PayloadTooLarge.default_message)
    elif isinstance(exc, SuspiciousOperation):
        status, body = 400, error_body("The request is malformed.")
    else:
        return None  # an unexpected error: Django's 500 view renders the envelope and it is logged
    return Response(body, status=status, headers=headers)


# Django's own error views (no DRF involved: unknown URLs, crashes outside DRF).


def json_error(message: str, status: int, **extra) -> JsonResponse:
    return JsonResponse(error_body(message, **extra), status=status)


def handler400(request, exception=None):
    return json_error("The request is malformed.", 400)


def handler403(request, exception=None):
    return json_error(Forbidden.default_message, 403)


def handler404(request, exception=None):
    return json_error(f"No route matches {request.path}.", 404)


def handler500(request):
    return json_error("An internal error occurred; it has been logged.", 500)
