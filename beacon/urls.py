"""Routes of beacon under /api/v1/."""

from django.urls import path

from . import views

urlpatterns = [
    path("beacon", views.BeaconOverviewView.as_view()),
    path("beacon/checks", views.CheckStartView.as_view()),
    path("beacon/checks/<str:check_id>", views.CheckDetailView.as_view()),
    path("beacon/sample", views.SampleView.as_view()),
    path("beacon/saved", views.SavedListView.as_view()),
    path("beacon/saved/<str:check_id>", views.SavedDetailView.as_view()),
]
