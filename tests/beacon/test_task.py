"""The scan task: claimed once, retried safely, a dead worker's check handed on after its lease, the sweeper."""

from datetime import timedelta

import pytest

from beacon import services, tasks
from beacon.models import Check
from core import clock, safe_http
from core.ids import new_id
from tests.beacon.sites import good

pytestmark = pytest.mark.django_db


def _check(url, **fields) -> Check:
    return Check.objects.create(id=new_id("bcn_"), url=url, created_at=clock.now(), paid_by="free:billing_disabled", **fields)


@pytest.fixture
def url(site):
    server, origin = site()
    server.routes.update(good(origin))
    return origin + "/"


def test_running_the_task_twice_scans_once(url):
    check = _check(url)
    with safe_http.allow_loopback():
        assert tasks.check_run(check.id) == "done"
        assert tasks.check_run(check.id) is None
    check.refresh_from_db()
    assert check.status == "done" and check.attempts == 1 and check.report["scores"]["overall"] == 100


def test_a_check_leased_to_a_live_worker_is_left_alone(url):
    check = _check(url, status="running", lease_until=clock.now() + timedelta(minutes=2), attempts=1)
    assert tasks.check_run(check.id) is None
    assert Check.objects.get(id=check.id).status == "running"


def test_a_dead_workers_check_is_taken_over_after_its_lease(url, django_capture_on_commit_callbacks):
    check = _check(url, status="running", lease_until=clock.now() - timedelta(seconds=1), attempts=1)
    with safe_http.allow_loopback(), django_capture_on_commit_callbacks(execute=True):
        assert tasks.check_sweep() == 1
    check.refresh_from_db()
    assert check.status == "done" and check.attempts == 2


def test_a_check_that_keeps_failing_ends_failed(url, settings):
    settings.BEACON_MAX_ATTEMPTS = 2
    check = _check(url, status="running", lease_until=clock.now() - timedelta(seconds=1), attempts=2)
    services.check_run(check_id=check.id)
    check.refresh_from_db()
    assert check.status == "failed" and "every attempt" in check.error


def test_a_crash_during_the_scan_puts_the_check_back_in_the_queue(url, monkeypatch):
    import beacon.scan

    monkeypatch.setattr(beacon.scan, "scan_site", lambda *a, **k: 1 / 0)
    check = _check(url)
    services.check_run(check_id=check.id)
    check.refresh_from_db()
    assert check.status == "queued" and check.attempts == 1 and check.lease_until is None


def test_a_pay_per_request_caller_gets_the_finished_check_at_once(url):
    with safe_http.allow_loopback():
        check = services.check_run_now(url=url, paid_by="x402")
    assert check.status == "done" and check.paid_by == "x402" and check.report["scores"]["overall"] == 100
