"""A real Celery worker killed mid-scan: the sweeper hands the check to a second worker, nothing is lost."""

import threading
import time
import uuid
from contextlib import contextmanager

import pytest
from django.conf import settings

from beacon import services, tasks
from beacon.models import Check
from beacon.sample_site import LocalSite
from config.celery import app
from core import clock
from core.ids import new_id
from tests.accounts.test_webhook_worker import start_worker, stop
from tests.beacon.sites import good

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.slow,
    pytest.mark.skipif(not settings.CELERY_BROKER_URL, reason="needs a broker: set REDIS_URL (CI does)"),
]


@contextmanager
def beacon_tasks_sent_to(queue: str):
    app.conf.task_always_eager = False
    app.conf.task_routes = {"beacon.tasks.*": {"queue": queue}}
    app.amqp.flush_routes()
    app.amqp.__dict__.pop("router", None)
    try:
        yield
    finally:
        app.conf.task_routes = None
        app.amqp.flush_routes()
        app.amqp.__dict__.pop("router", None)
        app.conf.task_always_eager = True


def test_a_worker_killed_mid_scan_loses_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("BEACON_LEASE_SECONDS", "10")
    monkeypatch.setenv("BEACON_MCP_REGISTRY_URL", "")
    first_hit = threading.Event()
    site = LocalSite()
    origin = f"http://127.0.0.1:{site.port}"
    site.routes.update(good(origin))
    home = site.routes["/"]

    def slow_home(handler):
        first_hit.set()
        time.sleep(3)
        return home

    site.routes["/"] = slow_home
    queue = f"test-beacon-{uuid.uuid4().hex[:8]}"
    workers = []
    check = Check.objects.create(id=new_id("bcn_"), url=origin + "/", status="queued", paid_by="free:billing_disabled", created_at=clock.now())
    try:
        with beacon_tasks_sent_to(queue):
            workers.append(start_worker(queue, tmp_path / "worker1.log"))
            tasks.check_run.delay(check.id)
            assert first_hit.wait(60), (tmp_path / "worker1.log").read_text()[-3000:]
            stop(workers[0])  # SIGKILL while the site holds the home page open
            check.refresh_from_db()
            assert check.status == "running" and check.attempts == 1

            workers.append(start_worker(queue, tmp_path / "worker2.log"))
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                services.check_sweep()  # what beat runs every minute
                check.refresh_from_db()
                if check.status == "done":
                    break
                time.sleep(1)
        assert check.status == "done", (tmp_path / "worker2.log").read_text()[-3000:]
        assert check.attempts == 2 and check.report["scores"]["read"] == 100
    finally:
        for worker in workers:
            stop(worker)
        site.stop()
