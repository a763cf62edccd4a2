"""Beacon's background work: the scan of one check, and the sweeper that requeues lost ones."""

from celery import shared_task

from . import services


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def check_run(check_id: str) -> str | None:
    """Scan one check. Idempotent: a check already done, failed or leased to a live worker is left alone."""
    check = services.check_run(check_id=check_id)
    return check.status if check is not None else None


@shared_task(acks_late=True, ignore_result=True)
def check_sweep() -> int:
    """Every minute (beat): requeue queued checks never taken and running checks whose lease ran out."""
    return services.check_sweep()
