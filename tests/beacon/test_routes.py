"""Beacon's routes: start (pre-flight, states, payment), status and report formats, sample, overview, saved reports, webhook."""

import json

import pytest
from django.utils import timezone

from accounts.models import WebhookEvent
from beacon.models import Check
from core import safe_http
from tests import netguard
from tests.accounts.receiver import Receiver
from tests.beacon.sites import good

pytestmark = pytest.mark.django_db


@pytest.fixture
def target(site):
    server, origin = site(name="shop.test")
    server.routes.update(good(origin))
    return server, origin + "/"


def start(client, url, capture):
    with safe_http.allow_loopback(), capture(execute=True):
        return client.post("/api/v1/beacon/checks", {"url": url}, format="json")


def test_a_check_starts_at_once_while_billing_is_off_and_its_report_is_ready(client, target, django_capture_on_commit_callbacks, settings):
    server, url = target
    response = start(client, url, django_capture_on_commit_callbacks)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["id"].startswith("bcn_") and body["checkout_url"] is None
    assert body["status_url"] == f"{settings.BASE_URL}/api/v1/beacon/checks/{body['id']}"
    assert body["paid_by"] == "free:billing_disabled"
    status = client.get(f"/api/v1/beacon/checks/{body['id']}").json()
    assert status["status"] == "done" and status["attempts"] == 1
    assert status["report"]["scores"]["overall"] == 100
    assert status["report"]["requests_made"] <= settings.BEACON_MAX_REQUESTS
    # The pre-flight is one request more; every request carried Beacon's User-Agent.
    assert len(server.requests) == status["report"]["requests_made"] + 1
    assert {r["headers"]["User-Agent"] for r in server.requests} == {f"SvcBeacon/1.0 (+{settings.BASE_URL}/beacon)"}


@pytest.mark.parametrize("url, message", [
    ("http://127.0.0.1/", "loopback"), ("http://10.0.0.1/", "private"), ("ftp://example.com/", "scheme"),
    ("not a url", "URL"), ("", "url"),
])
def test_anything_but_a_public_http_url_is_a_400(client, url, message):
    response = client.post("/api/v1/beacon/checks", {"url": url}, format="json")
    assert response.status_code == 400
    assert message in response.json()["error"]
    assert not Check.objects.exists()
    assert netguard.take_attempts() == []


def test_a_site_that_does_not_answer_is_refused_before_payment(client, fake_dns):
    import socket

    fake_dns({"dead.test": ["127.0.0.1"]})
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there
    with safe_http.allow_loopback():
        response = client.post("/api/v1/beacon/checks", {"url": f"http://dead.test:{port}/"}, format="json")
    assert response.status_code == 422
    assert "does not answer" in response.json()["error"] and "nothing is charged" in response.json()["error"]
    assert not Check.objects.exists()


def test_without_free_checks_and_billing_the_start_is_a_503(client, target, settings):
    settings.BEACON_FREE_WHEN_BILLING_DISABLED = False
    with safe_http.allow_loopback():
        response = client.post("/api/v1/beacon/checks", {"url": target[1]}, format="json")
    assert response.status_code == 503


def test_with_billing_a_check_waits_for_payment_and_runs_once_paid(fake, client, target, django_capture_on_commit_callbacks):
    from beacon.services import check_mark_paid

    response = start(client, target[1], django_capture_on_commit_callbacks)
    assert response.json()["status"] == "awaiting_payment"
    with safe_http.allow_loopback(), django_capture_on_commit_callbacks(execute=True):
        check_mark_paid(check_id=response.json()["id"], paid_by="card")
    assert Check.objects.get(id=response.json()["id"]).status == "done"


def test_an_organization_checks_its_own_verified_domain_free(alice, fake_dns, site, settings, django_capture_on_commit_callbacks):
    settings.BILLING_ENABLED = True
    server, origin = site(name="www.alice.test")
    server.routes.update(good(origin))
    alice.org.domain, alice.org.domain_verified_at = "alice.test", timezone.now()
    alice.org.save()
    body = start(alice.client, origin + "/", django_capture_on_commit_callbacks).json()
    assert body["paid_by"] == "free:verified_domain" and body["checkout_url"] is None
    assert alice.client.get(f"/api/v1/beacon/checks/{body['id']}").json()["status"] == "done"


def test_keyless_starts_are_throttled_per_address(client, target, settings, django_capture_on_commit_callbacks):
    settings.BEACON_START_RATE = "2/h"
    codes = [start(client, target[1], django_capture_on_commit_callbacks).status_code for _ in range(3)]
    assert codes == [201, 201, 429]


def test_the_report_comes_as_markdown_html_and_json_files(client, target, django_capture_on_commit_callbacks):
    check_id = start(client, target[1], django_capture_on_commit_callbacks).json()["id"]
    md = client.get(f"/api/v1/beacon/checks/{check_id}?format=md")
    assert md.status_code == 200 and md["Content-Type"].startswith("text/markdown")
    text = md.content.decode()
    assert text.startswith("# Beacon report: ") and "| 100 | 100 | 100 | 100 |" in text and "robots_ai_access" in text
    assert "Content-Disposition" not in md
    download = client.get(f"/api/v1/beacon/checks/{check_id}?format=md&download=1")
    assert download["Content-Disposition"] == f'attachment; filename="beacon-{check_id}.md"'
    as_json = client.get(f"/api/v1/beacon/checks/{check_id}?download=1")
    assert as_json["Content-Disposition"] == f'attachment; filename="beacon-{check_id}.json"'
    assert json.loads(as_json.content)["report"]["scores"]["overall"] == 100
    page = client.get(f"/api/v1/beacon/checks/{check_id}?format=html")
    assert page["Content-Type"].startswith("text/html")
    assert b"Beacon report" in page.content and b"Serve" not in page.content[:0]
    browser = client.get(f"/api/v1/beacon/checks/{check_id}", HTTP_ACCEPT="text/html,application/xhtml+xml,*/*;q=0.8")
    assert browser["Content-Type"].startswith("text/html")
    bad = client.get(f"/api/v1/beacon/checks/{check_id}?format=pdf")
    assert bad.status_code == 400 and bad["Content-Type"] == "application/json"


def test_a_report_page_shows_failures_with_their_fixes(client, site, django_capture_on_commit_callbacks):
    server, origin = site(name="bare.test")
    from tests.beacon.sites import bare

    server.routes.update(bare(origin))
    check_id = start(client, origin + "/", django_capture_on_commit_callbacks).json()["id"]
    page = client.get(f"/api/v1/beacon/checks/{check_id}?format=html").content.decode()
    assert "What to change first" in page and "Fix:" in page and "llms.txt" in page
    report = client.get(f"/api/v1/beacon/checks/{check_id}").json()["report"]
    impacts = [s["impact"] for s in report["suggestions"]]
    assert impacts == sorted(impacts, reverse=True) and impacts


def test_an_unknown_check_is_a_404_in_every_format(client):
    for query in ("", "?format=md", "?format=html"):
        response = client.get(f"/api/v1/beacon/checks/bcn_AAAAAAAAAAAAAAAA{query}")
        assert response.status_code == 404 and response["Content-Type"] == "application/json"


def test_the_overview_states_the_conduct(client, settings):
    body = client.get("/api/v1/beacon").json()
    assert body["conduct"]["user_agent"] == f"SvcBeacon/1.0 (+{settings.BASE_URL}/beacon)"
    assert body["conduct"]["max_requests_per_check"] == settings.BEACON_MAX_REQUESTS
    assert len(body["checks"]) == 17 and set(body["states"]) == {"awaiting_payment", "queued", "running", "done", "failed"}


def test_the_sample_is_a_real_scan_of_the_sample_site_and_a_fresh_scan_agrees(client, settings):
    from beacon.sample import build_sample_report

    sample = client.get("/api/v1/beacon/sample").json()
    assert "sample site" in sample["note"]
    fresh = build_sample_report()
    assert [(c["id"], c["status"]) for c in fresh["checks"]] == [(c["id"], c["status"]) for c in sample["report"]["checks"]]
    assert fresh["scores"] == sample["report"]["scores"]
    assert netguard.take_attempts() == []


def test_an_organization_saves_lists_and_removes_its_reports(alice, bob, target, django_capture_on_commit_callbacks):
    check_id = start(alice.client, target[1], django_capture_on_commit_callbacks).json()["id"]
    first = alice.client.put(f"/api/v1/beacon/saved/{check_id}")
    again = alice.client.put(f"/api/v1/beacon/saved/{check_id}")
    assert (first.status_code, again.status_code) == (201, 200)
    listed = alice.client.get("/api/v1/beacon/saved").json()["saved"]
    assert [s["id"] for s in listed] == [check_id] and listed[0]["scores"]["overall"] == 100
    assert bob.client.put(f"/api/v1/beacon/saved/{check_id}").status_code == 404
    assert bob.client.get("/api/v1/beacon/saved").json()["saved"] == []
    assert alice.client.delete(f"/api/v1/beacon/saved/{check_id}").status_code == 200
    assert alice.client.delete(f"/api/v1/beacon/saved/{check_id}").status_code == 404
    assert alice.client.get("/api/v1/beacon/saved").json()["saved"] == []


def test_a_keyless_check_cannot_be_saved_by_anyone(client, alice, target, django_capture_on_commit_callbacks):
    check_id = start(client, target[1], django_capture_on_commit_callbacks).json()["id"]
    assert alice.client.put(f"/api/v1/beacon/saved/{check_id}").status_code == 404


def test_a_finished_check_of_an_organization_sends_its_webhook(alice, target, django_capture_on_commit_callbacks):
    receiver = Receiver()
    try:
        with safe_http.allow_loopback():
            assert alice.client.put("/api/v1/webhook", {"url": receiver.url.replace("127.0.0.1", "localhost")}, format="json").status_code == 200
            check_id = start(alice.client, target[1], django_capture_on_commit_callbacks).json()["id"]
            assert receiver.wait_for(1, timeout=10)
        event = WebhookEvent.objects.get(org=alice.org, type="beacon.check.finished")
        assert event.data["id"] == check_id and event.data["scores"]["overall"] == 100
        assert json.loads(receiver.received[0]["body"])["type"] == "beacon.check.finished"
    finally:
        receiver.stop()
