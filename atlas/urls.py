"""Routes of atlas under /api/v1/."""

from django.urls import path

from atlas import views

urlpatterns = [
    path("atlas", views.AtlasOverviewView.as_view()),
    path("atlas/agents", views.AgentListView.as_view()),
    path("atlas/agents/<slug:slug>", views.AgentDetailView.as_view()),
    path("atlas/lookup", views.LookupView.as_view()),
    path("atlas/lookup/verify", views.LookupVerifyView.as_view()),
    path("atlas/summary", views.SummaryView.as_view()),
    path("atlas/sightings", views.SightingsView.as_view()),
    path("atlas/traffic", views.TrafficView.as_view()),
    path("atlas/datasets", views.DatasetListView.as_view()),
    path("atlas/datasets/<slug:dataset_id>", views.DatasetDetailView.as_view()),
    path("atlas/report", views.ReportView.as_view()),
    path("atlas/checkout", views.CheckoutView.as_view()),
    path("atlas/subscription", views.SubscriptionView.as_view()),
    path("atlas/registrations", views.RegistrationListView.as_view()),
    path("atlas/registrations/<str:registration_id>", views.RegistrationDetailView.as_view()),
    path("atlas/registrations/<str:registration_id>/verify", views.RegistrationVerifyView.as_view()),
]
