from django.urls import path

from accounts import views

urlpatterns = [
    path("signup", views.SignupView.as_view()),
    path("signup/recover", views.RecoveryStartView.as_view()),
    path("signup/recover/verify", views.RecoveryVerifyView.as_view()),
    path("org/domain", views.OrgDomainView.as_view()),
    path("org/domain/verify", views.OrgDomainVerifyView.as_view()),
    path("me", views.MeView.as_view()),
    path("api-keys", views.ApiKeyListView.as_view()),
    path("api-keys/<uuid:key_id>", views.ApiKeyDetailView.as_view()),
    path("org", views.OrgView.as_view()),
    path("org/claim", views.OrgClaimView.as_view()),
    path("audit-log", views.AuditLogView.as_view()),
    path("webhook", views.WebhookView.as_view()),
    path("webhook/test", views.WebhookTestView.as_view()),
]
