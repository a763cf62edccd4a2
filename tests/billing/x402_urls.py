"""Test-only x402 routes, declared the way the product routes declare theirs."""

from django.urls import include, path
from rest_framework import serializers
from rest_framework.response import Response

from billing.x402 import X402View
from core.errors import NotFound


class EchoIn(serializers.Serializer):
    input = serializers.CharField(max_length=2000)
    missing = serializers.BooleanField(required=False, default=False)


class PaidEcho(X402View):
    price = "$0.002"
    description = "Echo, for tests"

    def check(self, request):
        return self.validated(EchoIn, request.data)

    def paid(self, request, data):
        if data["missing"]:
            raise NotFound("No such thing.")
        return Response({"echo": data["input"]})


class PaidReport(X402View):
    price = "$9"
    description = "A report, for tests"
    mime_type = "text/markdown"
    max_timeout_seconds = 300

    def paid(self, request, data):
        return Response({"report": "# Report"})


class PaidLookup(X402View):
    price = "$0.001"
    description = "A lookup, for tests"

    def check(self, request):
        value = request.query_params.get("user_agent", "")
        if not value:
            from core.errors import BadRequest

            raise BadRequest("user_agent: This field is required.")
        return value

    def paid(self, request, data):
        return Response({"user_agent": data})


handler404 = "core.errors.handler404"
urlpatterns = [
    path("x402-test/echo", PaidEcho.as_view()),
    path("x402-test/report", PaidReport.as_view()),
    path("x402-test/lookup", PaidLookup.as_view()),
    path("", include("config.urls")),
]
