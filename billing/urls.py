from django.urls import path

from billing import views

urlpatterns = [
    path("plans", views.PlanListView.as_view()),
    path("usage", views.UsageView.as_view()),
]
