"""Every route of the service, plus two bench-only views to measure against.

/bench/bare        a bare DRF view: no authentication, no permission, a trivial Response. The floor.
/bench/idempotent  an ApiView with a required key, scope "evaluate" and Idempotency-Key, returning a
                   trivial body: the cost of the key and idempotency machinery without any product work.
/bench/metered     the same, metered like evaluate (daily allowance, minute burst, usage, headers):
                   against /bench/idempotent without a key header, the cost of metering alone.
"""

from django.urls import include, path
from rest_framework.response import Response
from rest_framework.views import APIView

from billing.api import MeteredView
from config.urls import handler400, handler403, handler404, handler500  # noqa: F401 - the envelope error views
from core.api import ApiView


class BareView(APIView):
    authentication_classes = []
    permission_classes = []

    def get(self, request):
        return Response({"ok": True})

    def post(self, request):
        return Response({"ok": True, "n": len(request.data)})


class IdempotentView(ApiView):
    auth = "required"
    scope = "evaluate"
    idempotent = True

    def post(self, request):
        return Response({"ok": True, "n": len(request.data)})


class MeteredBenchView(MeteredView):
    auth = "required"
    scope = "evaluate"
    meter = "evaluations"
    product = "guardrails"

    def post(self, request):
        return Response({"ok": True, "n": len(request.data)})


urlpatterns = [
    path("bench/metered", MeteredBenchView.as_view()),
    path("bench/bare", BareView.as_view()),
    path("bench/idempotent", IdempotentView.as_view()),
    path("", include("config.urls")),
]
