"""Service-wide routes: health, the published signing key, the home page and /llms.txt."""

from django.conf import settings
from django.db import connection
from django.shortcuts import render
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from core.api import ApiView
from core.schema import obj
from core.signing import public_key_record


class HealthView(ApiView):
    """Whether the service can reach its database and, when configured, Redis. 503 when not."""

    auth = "none"

    @extend_schema(tags=["Meta"], responses={200: obj("Health", status=serializers.CharField(), version=serializers.CharField(), checks=serializers.DictField(child=serializers.CharField())), 503: obj("HealthFailing", status=serializers.CharField(), checks=serializers.DictField(child=serializers.CharField()))})
    def get(self, request):
        checks = {"database": "ok", "redis": "not configured"}
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1")
        except Exception:  # noqa: BLE001 - any failure means unhealthy
            checks["database"] = "failing"
        if settings.REDIS_URL:
            try:
                import redis

                redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2).ping()
                checks["redis"] = "ok"
            except Exception:  # noqa: BLE001
                checks["redis"] = "failing"
        healthy = all(value != "failing" for value in checks.values())
        return Response(
            {"status": "ok" if healthy else "failing", "version": settings.SERVICE_VERSION, "checks": checks},
            status=200 if healthy else 503,
        )


class SigningKeyView(ApiView):
    """The Ed25519 public key that signs Tower receipts and Preflight verdicts (RFC 8785 JSON)."""

    auth = "none"

    @extend_schema(tags=["Meta"], responses={200: obj("SigningKey", key_id=serializers.CharField(), algorithm=serializers.CharField(), public_key_pem=serializers.CharField())})
    def get(self, request):
        return Response(public_key_record())


def home(request):
    return render(request, "home.html", {"base_url": settings.BASE_URL, "version": settings.SERVICE_VERSION})


def llms_txt(request):
    return render(request, "llms.txt", {"base_url": settings.BASE_URL, "version": settings.SERVICE_VERSION},
                  content_type="text/plain; charset=utf-8")
