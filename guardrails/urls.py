"""Routes of guardrails under /api/v1/."""

from django.urls import path

from guardrails import views

urlpatterns = [
    path("evaluate", views.EvaluateView.as_view()),
    path("evaluate/batch", views.EvaluateBatchView.as_view()),
    path("evaluations", views.EvaluationListView.as_view()),
    path("evaluations/<str:evaluation_id>", views.EvaluationDetailView.as_view()),
    path("rule-sets", views.RuleSetListView.as_view()),
    path("rule-sets/<str:slug>", views.RuleSetDetailView.as_view()),
    path("languages", views.LanguagesView.as_view()),
    path("feedback", views.FeedbackView.as_view()),
]
