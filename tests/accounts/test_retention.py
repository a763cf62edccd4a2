from datetime import timedelta

import pytest

from accounts import retention
from accounts.models import AuditEvent
from accounts.tasks import retention_purge
from core import clock

pytestmark = pytest.mark.django_db


@pytest.fixture
def audit_is_retained(monkeypatch):
    """Stand-in for a product's registration (Guardrails registers its evaluations the same way)."""
    monkeypatch.setattr(retention, "_registry", {"accounts.AuditEvent": "created_at"})


def events(org, *ages_in_days):
    now = clock.now()
    for age in ages_in_days:
        AuditEvent.objects.create(org=org, action=f"test.age{age}", created_at=now - timedelta(days=age, minutes=1))


def test_the_daily_purge_deletes_only_records_past_each_orgs_retention(alice, bob, audit_is_retained):
    alice.org.retention_days = 7
    alice.org.save()
    events(alice.org, 1, 6, 8, 400)
    events(bob.org, 1, 8, 400)  # bob keeps everything: retention_days is null
    before_bob = AuditEvent.objects.filter(org=bob.org).count()
    result = retention_purge.delay().get()
    assert result == {"accounts.AuditEvent": 2}
    kept = set(AuditEvent.objects.filter(org=alice.org, action__startswith="test.").values_list("action", flat=True))
    assert kept == {"test.age1", "test.age6"}
    assert AuditEvent.objects.filter(org=bob.org).count() == before_bob


def test_the_purge_is_scheduled_daily():
    from django.conf import settings

    schedule = settings.CELERY_BEAT_SCHEDULE["retention-purge"]
    assert schedule["task"] == "accounts.tasks.retention_purge"
    assert schedule["schedule"].hour == {3} and schedule["schedule"].minute == {15}
