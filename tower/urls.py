"""Routes of tower under /api/v1/ (filled in by its issue)."""

urlpatterns: list = []
