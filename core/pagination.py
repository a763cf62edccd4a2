"""Opaque cursors for newest-first lists: a cursor names the last row of the previous page."""

import base64
import json
from datetime import datetime

from core.errors import BadRequest


def cursor_encode(created_at: datetime, pk: object) -> str:
    raw = json.dumps([created_at.isoformat(), str(pk)], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def cursor_decode(cursor: str) -> tuple[datetime, str]:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        created, pk = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
        return datetime.fromisoformat(created), str(pk)
    except (ValueError, TypeError, UnicodeError):
        raise BadRequest("cursor is not a cursor this service issued.") from None


def page_newest_first(queryset, *, limit: int, cursor: str | None = None, pk_field: str = "pk"):
    """One page ordered by (created_at, pk) descending, and the cursor of the next page or None."""
    from django.db.models import Q

    queryset = queryset.order_by("-created_at", f"-{pk_field}")
    if cursor:
        created, pk = cursor_decode(cursor)
        queryset = queryset.filter(Q(created_at__lt=created) | Q(created_at=created, **{f"{pk_field}__lt": pk}))
    rows = list(queryset[: limit + 1])
    next_cursor = None
    if len(rows) > limit:
        rows = rows[:limit]
        last = rows[-1]
        next_cursor = cursor_encode(last.created_at, getattr(last, pk_field))
    return rows, next_cursor
