from django.urls import path

from billing import views

urlpatterns = [
    path("plans", views.PlanListView.as_view()),
    path("usage", views.UsageView.as_view()),
    path("billing", views.BillingView.as_view()),
    path("billing/checkout", views.BillingCheckoutView.as_view()),
    path("billing/subscribe", views.BillingSubscribeView.as_view()),
    path("billing/portal", views.BillingPortalView.as_view()),
    path("billing/credits/checkout", views.CreditsCheckoutView.as_view()),
    path("billing/webhooks/stripe", views.StripeWebhookView.as_view()),
]
