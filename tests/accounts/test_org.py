from datetime import timedelta

import pytest

from accounts.models import ApiKey, AuditEvent, Organization
from core import clock

pytestmark = pytest.mark.django_db


def test_org_settings_can_be_read_and_changed(alice):
    assert alice.client.get("/api/v1/org").json() == {"id": str(alice.org.pk), "name": "alice", "store_inputs": True, "retention_days": None}
    changed = alice.client.patch("/api/v1/org", {"store_inputs": False, "retention_days": 30}, format="json")
    assert changed.status_code == 200
    assert changed.json()["store_inputs"] is False and changed.json()["retention_days"] == 30
    cleared = alice.client.patch("/api/v1/org", {"retention_days": None}, format="json")
    assert cleared.json()["retention_days"] is None
    assert AuditEvent.objects.filter(org=alice.org, action="accounts.org.updated").count() == 2


@pytest.mark.parametrize("body", [{"retention_days": 0}, {"retention_days": 3651}, {"retention_days": "ten"}, {"store_inputs": "maybe"}])
def test_bad_org_settings_are_400_naming_the_field(alice, body):
    response = alice.client.patch("/api/v1/org", body, format="json")
    assert response.status_code == 400
    assert response.json()["error"].startswith(next(iter(body)))


def test_deleting_the_org_needs_its_exact_name(alice, bob):
    missing = alice.client.delete("/api/v1/org", {}, format="json")
    assert missing.status_code == 400 and "confirm" in missing.json()["error"]
    wrong = alice.client.delete("/api/v1/org", {"confirm": "Alice"}, format="json")
    assert wrong.status_code == 400
    done = alice.client.delete("/api/v1/org", {"confirm": "alice"}, format="json")
    assert done.status_code == 200
    assert done.json() == {"deleted": True, "org_id": str(alice.org.pk), "subscription_canceled": False}
    assert not Organization.objects.filter(pk=alice.org.pk).exists()
    assert not ApiKey.objects.filter(org_id=alice.org.pk).exists()
    assert alice.client.get("/api/v1/me").status_code == 401
    assert bob.client.get("/api/v1/me").status_code == 200


def test_the_audit_log_is_newest_first_and_pages_with_next_before(alice, bob):
    base = clock.now()
    for i in range(5):
        AuditEvent.objects.create(org=alice.org, action=f"test.e{i}", created_at=base + timedelta(seconds=i))
    AuditEvent.objects.create(org=bob.org, action="test.bob", created_at=base + timedelta(seconds=10))
    first = alice.client.get("/api/v1/audit-log?limit=2").json()
    assert [e["action"] for e in first["events"]] == ["test.e4", "test.e3"]
    second = alice.client.get("/api/v1/audit-log", {"limit": 2, "before": first["next_before"]}).json()
    assert [e["action"] for e in second["events"]] == ["test.e2", "test.e1"]
    everything = alice.client.get("/api/v1/audit-log?limit=200").json()
    assert "test.bob" not in [e["action"] for e in everything["events"]]
    assert everything["next_before"] is None


@pytest.mark.parametrize("query", ["limit=0", "limit=201", "limit=x", "before=yesterday"])
def test_bad_audit_log_queries_are_400(alice, query):
    response = alice.client.get(f"/api/v1/audit-log?{query}")
    assert response.status_code == 400
    assert query.split("=")[0] in response.json()["error"]
