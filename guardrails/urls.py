"""Routes of guardrails under /api/v1/ (filled in by its issue)."""

urlpatterns: list = []
