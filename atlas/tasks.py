"""Atlas tasks run by Celery beat: refresh the seed and IP lists, the nightly traffic report, datasets."""

import logging

from celery import shared_task
from django.conf import settings

log = logging.getLogger(__name__)


@shared_task(acks_late=True)
def atlas_refresh() -> dict:
    """Daily: reload the registry seed and fetch each operator's published IP list (through safe_http)."""
    from atlas.services import registry_refresh

    result = registry_refresh(fetch=settings.ATLAS_REFRESH_FETCH)
    log.info("atlas refresh: %s", result)
    return result


@shared_task(acks_late=True)
def atlas_traffic_report_build() -> bool:
    """Nightly: the traffic report over the whole observed period."""
    from atlas.services import traffic_report_build

    return traffic_report_build() is not None


@shared_task(acks_late=True)
def atlas_datasets_build() -> dict:
    """Nightly: rebuild every dataset from the data held."""
    from atlas.reports import datasets_build

    return datasets_build()
