"""Retention: records an organization keeps only for `retention_days`, deleted once a day.

A product registers its model once (in its AppConfig.ready):

    retention.register("guardrails.Evaluation")            # rows with `org` and `created_at`

and the daily purge deletes that model's rows older than each organization's `retention_days`.
Organizations with `retention_days` null keep everything until they delete it.
"""

from datetime import datetime, timedelta

from django.apps import apps

from accounts.models import Organization
from core import clock

BATCH = 5_000
_registry: dict[str, str] = {}


def register(model_label: str, *, date_field: str = "created_at") -> None:
    _registry[model_label] = date_field


def registered() -> dict[str, str]:
    return dict(_registry)


def retention_purge(*, now: datetime | None = None) -> dict[str, int]:
    """Delete every registered record past its organization's retention; counts per model."""
    now = now or clock.now()
    deleted = {label: 0 for label in _registry}
    orgs = Organization.objects.filter(retention_days__isnull=False).values_list("pk", "retention_days")
    for org_id, days in orgs.iterator():
        cutoff = now - timedelta(days=days)
        for label, date_field in _registry.items():
            model = apps.get_model(label)
            old = model.objects.filter(org_id=org_id, **{f"{date_field}__lt": cutoff})
            while True:
                ids = list(old.values_list("pk", flat=True)[:BATCH])
                if not ids:
                    break
                count, _ = model.objects.filter(pk__in=ids).delete()
                deleted[label] += len(ids) if count else 0
    return deleted
