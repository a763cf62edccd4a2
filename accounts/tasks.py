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
