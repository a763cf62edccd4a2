"""Routes of beacon under /api/v1/ (filled in by its issue)."""

urlpatterns: list = []
