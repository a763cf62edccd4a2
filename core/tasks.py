"""Housekeeping of the shared mechanisms."""

from celery import shared_task

from core.idempotency import idempotency_purge as idempotency_purge_service


@shared_task(acks_late=True)
def idempotency_purge() -> int:
    """Daily: drop idempotency records past their 24 hours."""
    return idempotency_purge_service()
