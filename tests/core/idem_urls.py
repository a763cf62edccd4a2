"""A test-only idempotent route: each real execution leaves one audit event behind."""

import time

from django.urls import include, path
from rest_framework.response import Response

from accounts.models import AuditEvent
from accounts.services import audit_record
from core.api import ApiView
from core.errors import BadRequest


class CountedView(ApiView):
    auth = "required"
    scope = "evaluate"
    idempotent = True

    def post(self, request):
        if request.data.get("fail"):
            raise BadRequest("fail: asked to fail.")
        time.sleep(float(request.data.get("sleep", 0)))
        audit_record(org=request.org, action="test.executed", data={"body": request.data})
        runs = AuditEvent.objects.filter(org=request.org, action="test.executed").count()
        return Response({"runs": runs, "echo": request.data.get("value")}, status=201)


urlpatterns = [
    path("counted", CountedView.as_view()),
    path("", include("config.urls")),
]
