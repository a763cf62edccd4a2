"""Routes of the whole service. Products mount under /api/v1/ (keyed) and /api/x402/ (pay-per-use)."""

from django.contrib import admin
from django.urls import include, path
from drf_spectacular.renderers import OpenApiJsonRenderer, OpenApiYamlRenderer
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

from beacon import views as beacon_views
from core import views as core_views

handler400 = "core.errors.handler400"
handler403 = "core.errors.handler403"
handler404 = "core.errors.handler404"
handler500 = "core.errors.handler500"

api_v1 = [
    path("", include("accounts.urls")),
    path("", include("billing.urls")),
    path("", include("guardrails.urls")),
    path("", include("atlas.urls")),
    path("", include("beacon.urls")),
    path("", include("tower.urls")),
    path("", include("preflight.urls")),
    path("health", core_views.HealthView.as_view()),
    path("signing-key", core_views.SigningKeyView.as_view()),
]

urlpatterns = [
    path("", core_views.home, name="home"),
    path("llms.txt", core_views.llms_txt, name="llms-txt"),
    path("beacon", beacon_views.about_page, name="beacon-about"),
    path("api/v1/", include(api_v1)),
    path("api/x402/", include("billing.x402_urls")),
    path("api/v1/openapi.json", SpectacularAPIView.as_view(renderer_classes=[OpenApiJsonRenderer]), name="schema"),
    path("api/v1/openapi.yaml", SpectacularAPIView.as_view(renderer_classes=[OpenApiYamlRenderer]), name="schema-yaml"),
    path("docs", SpectacularSwaggerView.as_view(url_name="schema"), name="docs"),
    path("docs/redoc", SpectacularRedocView.as_view(url_name="schema"), name="redoc"),
    path("admin/", admin.site.urls),
]
