"""Routes of atlas under /api/v1/ (filled in by its issue)."""

urlpatterns: list = []
