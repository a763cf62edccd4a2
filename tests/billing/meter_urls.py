"""Test-only metered routes, declared the way product views declare theirs."""

from django.urls import include, path
from rest_framework.response import Response

from billing.api import MeteredView
from core.errors import BadRequest


class EvaluateLike(MeteredView):
    auth = "optional"
    scope = "evaluate"
    meter = "evaluations"
    product = "guardrails"
    idempotent = True

    def metered_units(self, request):
        return int(request.data.get("units", 1)) if isinstance(request.data, dict) else 1

    def post(self, request):
        if request.data.get("fail"):
            raise BadRequest("fail: asked to fail.")
        return Response({"ok": True, "keyless": request.keyless})


class LookupLike(MeteredView):
    auth = "optional"
    scope = "evaluate"
    meter = "atlas_lookups"
    product = "atlas"

    def get(self, request):
        return Response({"ok": True})


handler404 = "core.errors.handler404"
urlpatterns = [
    path("metered", EvaluateLike.as_view()),
    path("lookup", LookupLike.as_view()),
    path("", include("config.urls")),
]
