import threading
from datetime import timedelta

import pytest
import requests

from accounts.models import AuditEvent
from core import clock
from core.models import IdempotencyRecord

pytestmark = pytest.mark.urls("tests.core.idem_urls")


def runs(org) -> int:
    return AuditEvent.objects.filter(org=org, action="test.executed").count()


@pytest.mark.django_db
def test_a_retry_with_the_same_key_and_body_replays_the_stored_response(alice):
    first = alice.client.post("/counted", {"value": 1}, format="json", HTTP_IDEMPOTENCY_KEY="order-1")
    again = alice.client.post("/counted", {"value": 1}, format="json", HTTP_IDEMPOTENCY_KEY="order-1")
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json()
    assert again["Idempotency-Replayed"] == "true"
    assert "Idempotency-Replayed" not in first
    assert runs(alice.org) == 1


@pytest.mark.django_db
def test_the_same_key_with_a_different_body_is_refused_with_422(alice):
    alice.client.post("/counted", {"value": 1}, format="json", HTTP_IDEMPOTENCY_KEY="k1")
    other = alice.client.post("/counted", {"value": 2}, format="json", HTTP_IDEMPOTENCY_KEY="k1")
    assert other.status_code == 422
    assert "different request body" in other.json()["error"]
    assert runs(alice.org) == 1


@pytest.mark.django_db
def test_keys_belong_to_one_organization(alice, bob):
    alice.client.post("/counted", {"value": 1}, format="json", HTTP_IDEMPOTENCY_KEY="shared")
    theirs = bob.client.post("/counted", {"value": 2}, format="json", HTTP_IDEMPOTENCY_KEY="shared")
    assert theirs.status_code == 201
    assert "Idempotency-Replayed" not in theirs
    assert runs(bob.org) == 1


@pytest.mark.django_db
def test_a_request_still_running_makes_a_retry_get_409(alice):
    IdempotencyRecord.objects.create(
        scope=f"org:{alice.org.pk}", key="busy", fingerprint="x" * 64,
        created_at=clock.now(), locked_until=clock.now() + timedelta(minutes=5),
    )
    from core.idempotency import request_fingerprint

    IdempotencyRecord.objects.filter(key="busy").update(fingerprint=request_fingerprint("POST", "/counted", {"value": 1}))
    response = alice.client.post("/counted", {"value": 1}, format="json", HTTP_IDEMPOTENCY_KEY="busy")
    assert response.status_code == 409
    assert "still in progress" in response.json()["error"]
    assert runs(alice.org) == 0


@pytest.mark.django_db
def test_a_failed_request_frees_its_key_for_a_retry(alice):
    failed = alice.client.post("/counted", {"fail": True}, format="json", HTTP_IDEMPOTENCY_KEY="retry-me")
    assert failed.status_code == 400
    retried = alice.client.post("/counted", {"fail": True}, format="json", HTTP_IDEMPOTENCY_KEY="retry-me")
    assert retried.status_code == 400
    assert "Idempotency-Replayed" not in retried
    assert not IdempotencyRecord.objects.filter(key="retry-me").exists()


@pytest.mark.django_db
def test_a_stored_response_is_kept_24_hours_and_then_the_key_runs_again(alice, monkeypatch):
    alice.client.post("/counted", {"value": 1}, format="json", HTTP_IDEMPOTENCY_KEY="day")
    later = clock.now() + timedelta(hours=23, minutes=59)
    monkeypatch.setattr(clock, "now", lambda: later)
    assert alice.client.post("/counted", {"value": 1}, format="json", HTTP_IDEMPOTENCY_KEY="day")["Idempotency-Replayed"] == "true"
    much_later = clock.now() + timedelta(hours=24, minutes=1)
    monkeypatch.setattr(clock, "now", lambda: much_later)
    fresh = alice.client.post("/counted", {"value": 1}, format="json", HTTP_IDEMPOTENCY_KEY="day")
    assert fresh.status_code == 201
    assert "Idempotency-Replayed" not in fresh
    assert runs(alice.org) == 2


@pytest.mark.django_db
def test_a_request_presumed_dead_past_its_lock_lets_the_key_run_again(alice, monkeypatch):
    from core.idempotency import request_fingerprint

    IdempotencyRecord.objects.create(
        scope=f"org:{alice.org.pk}", key="crashed", fingerprint=request_fingerprint("POST", "/counted", {"value": 1}),
        created_at=clock.now() - timedelta(minutes=10), locked_until=clock.now() - timedelta(minutes=5),
    )
    response = alice.client.post("/counted", {"value": 1}, format="json", HTTP_IDEMPOTENCY_KEY="crashed")
    assert response.status_code == 201
    assert runs(alice.org) == 1


@pytest.mark.django_db
@pytest.mark.parametrize("key", ["", "has space", "x" * 256, "é", "a/b"])
def test_a_malformed_key_is_refused_with_400(alice, key):
    response = alice.client.post("/counted", {"value": 1}, format="json", HTTP_IDEMPOTENCY_KEY=key)
    assert response.status_code == 400
    assert "Idempotency-Key" in response.json()["error"]
    assert runs(alice.org) == 0


@pytest.mark.django_db(transaction=True)
def test_many_parallel_requests_with_one_key_execute_exactly_once(live_server, alice):
    results = []
    barrier = threading.Barrier(16)

    def fire():
        barrier.wait()
        response = requests.post(
            f"{live_server.url}/counted",
            json={"value": 7, "sleep": 0.3},
            headers={"Authorization": f"Bearer {alice.key}", "Idempotency-Key": "parallel-1"},
            timeout=30,
        )
        results.append((response.status_code, response.headers.get("Idempotency-Replayed"), response.json()))

    threads = [threading.Thread(target=fire) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert runs(alice.org) == 1
    executed = [r for r in results if r[0] == 201 and r[1] is None]
    assert len(executed) == 1
    for status, _replayed, body in results:
        assert (status == 201 and body == executed[0][2]) or (status == 409 and "error" in body)
    after = requests.post(
        f"{live_server.url}/counted", json={"value": 7, "sleep": 0.3},
        headers={"Authorization": f"Bearer {alice.key}", "Idempotency-Key": "parallel-1"}, timeout=30,
    )
    assert after.headers["Idempotency-Replayed"] == "true"
    assert after.json() == executed[0][2]
