"""Routes of preflight under /api/v1/ (filled in by its issue)."""

urlpatterns: list = []
