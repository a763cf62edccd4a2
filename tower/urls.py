"""Routes of Tower under /api/v1/."""

from django.urls import path

from tower import views

urlpatterns = [
    path("tower/template", views.TemplateView.as_view()),
    path("tower/agents", views.AgentListView.as_view()),
    path("tower/agents/<uuid:agent_id>", views.AgentDetailView.as_view()),
    path("tower/capabilities", views.CapabilitiesView.as_view()),
    path("tower/decide", views.DecideView.as_view()),
    path("tower/actions", views.ActionCreateView.as_view()),
    path("tower/actions/<str:action_id>", views.ActionDetailView.as_view()),
    path("tower/actions/<str:action_id>/compensate", views.ActionCompensateView.as_view()),
    path("tower/receipts/verify", views.ReceiptVerifyView.as_view()),
    path("tower/receipts/export", views.ReceiptExportView.as_view()),
    path("tower/receipts/public-key", views.PublicKeyView.as_view()),
    path("tower/receipts/<str:ref>", views.ReceiptDetailView.as_view()),
    path("tower/checkout", views.CheckoutView.as_view()),
    path("tower/subscription", views.SubscriptionView.as_view()),
]
