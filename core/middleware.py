"""Request-wide middleware: a request id on every response, a cap on body size."""

import re

from django.conf import settings

from core.errors import json_error
from core.ids import new_id

_REQUEST_ID = re.compile(r"^[A-Za-z0-9_.:-]{8,64}$")


class RequestIdMiddleware:
    """Tags every request and response with `X-Request-Id` (the caller's, when well-formed)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        incoming = request.META.get("HTTP_X_REQUEST_ID", "")
        request.request_id = incoming if _REQUEST_ID.match(incoming) else new_id("req_")
        response = self.get_response(request)
        response["X-Request-Id"] = request.request_id
        return response


class BodySizeLimitMiddleware:
    """Refuses a body over MAX_BODY_BYTES with 413 before anything reads it."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        length = request.META.get("CONTENT_LENGTH") or "0"
        try:
            size = int(length)
        except ValueError:
            return json_error("Content-Length must be a whole number.", 400)
        if size > settings.MAX_BODY_BYTES:
            return json_error(f"The request body is larger than {settings.MAX_BODY_BYTES} bytes.", 413)
        return self.get_response(request)
