from django.urls import path
from rest_framework.response import Response

from core.api import ApiView


class CrashView(ApiView):
    auth = "none"

    def get(self, request):
        raise RuntimeError("secret detail that must not leak")
        return Response({})


handler500 = "core.errors.handler500"
urlpatterns = [path("crash", CrashView.as_view())]
