"""Routes of preflight under /api/v1/."""

from django.urls import path

from preflight import views

urlpatterns = [
    path("preflight", views.PreflightOverviewView.as_view()),
    path("preflight/checks", views.CheckCreateView.as_view()),
    path("preflight/checks/<str:check_id>", views.CheckDetailView.as_view()),
    path("preflight/checks/<str:check_id>/reports", views.ReportCreateView.as_view()),
    path("preflight/record", views.RecordView.as_view()),
]
