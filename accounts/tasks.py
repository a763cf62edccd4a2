"""Account tasks run by Celery beat."""

import logging

from celery import shared_task

from accounts.retention import retention_purge as retention_purge_service

log = logging.getLogger(__name__)


@shared_task(acks_late=True)
def retention_purge() -> dict:
    """Daily: delete records older than each organization's retention_days."""
    deleted = retention_purge_service()
    log.info("retention purge deleted %s", deleted)
    return deleted


@shared_task(acks_late=True, ignore_result=True)
def webhook_deliver(delivery_id: int) -> str:
    """Deliver one webhook event (claimed with a lease; safe to run twice)."""
    from accounts.webhooks import webhook_deliver as deliver

    return deliver(delivery_id)


@shared_task(acks_late=True, ignore_result=True)
def webhook_sweep() -> int:
    """Every few seconds from beat: queue deliveries that are due for a retry or whose worker died."""
    from accounts.webhooks import webhook_sweep as sweep

    return sweep()
