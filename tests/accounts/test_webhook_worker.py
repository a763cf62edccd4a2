"""A real Celery worker, killed mid-delivery: nothing is lost."""

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from accounts import webhooks
from accounts.models import WebhookDelivery
from config.celery import app
from tests.accounts.receiver import Receiver

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.slow,
    pytest.mark.skipif(not settings.CELERY_BROKER_URL, reason="needs a broker: set REDIS_URL (CI does)"),
]

ROOT = Path(__file__).resolve().parents[2]


def database_url() -> str:
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{Path(db['NAME']).resolve()}"
    auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


@contextmanager
def tasks_sent_to(queue: str):
    """Send this app's tasks to a queue of our own, for real, for the length of the block."""
    app.conf.task_always_eager = False
    app.conf.task_routes = {"accounts.tasks.*": {"queue": queue}}
    app.amqp.flush_routes()
    app.amqp.__dict__.pop("router", None)
    try:
        yield
    finally:
        app.conf.task_routes = None
        app.amqp.flush_routes()
        app.amqp.__dict__.pop("router", None)
        app.conf.task_always_eager = True


def start_worker(queue: str, log_path: Path) -> subprocess.Popen:
    env = {**os.environ, "DATABASE_URL": database_url(), "SAFE_HTTP_ALLOW_LOOPBACK": "1", "WEBHOOK_LEASE_SECONDS": "3",
           "CELERY_TASK_ALWAYS_EAGER": "0"}
    log = log_path.open("ab")
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "-P", "solo", "-Q", queue,
         "--without-gossip", "--without-mingle", "--without-heartbeat", "-l", "info"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )


def stop(worker: subprocess.Popen) -> None:
    if worker.poll() is None:
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait(timeout=10)


def test_a_worker_killed_mid_delivery_loses_nothing(alice, tmp_path):
    receiver = Receiver(statuses=[200], hold_first_seconds=8)
    queue = f"test-webhooks-{uuid.uuid4().hex[:8]}"
    workers = []
    try:
        secret = alice.client.put("/api/v1/webhook", {"url": receiver.url}, format="json").json()["secret"]
        with tasks_sent_to(queue):
            workers.append(start_worker(queue, tmp_path / "worker1.log"))
            event_id = alice.client.post("/api/v1/webhook/test").json()["event_id"]
            assert receiver.arrived.wait(60), (tmp_path / "worker1.log").read_text()[-3000:]
            os.killpg(workers[0].pid, signal.SIGKILL)  # dies while the receiver holds the POST open
            workers[0].wait(timeout=10)

            delivery = WebhookDelivery.objects.get(event_id=event_id)
            assert delivery.status == "delivering" and delivery.attempts == 0

            workers.append(start_worker(queue, tmp_path / "worker2.log"))
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                webhooks.webhook_sweep()  # what beat runs every few seconds
                delivery.refresh_from_db()
                if delivery.status == "succeeded":
                    break
                time.sleep(0.5)
        assert delivery.status == "succeeded", (tmp_path / "worker2.log").read_text()[-3000:]
        ids = [json.loads(r["body"])["id"] for r in receiver.received]
        assert set(ids) == {event_id} and len(ids) >= 2  # at least once: the receiver de-duplicates on id
        assert all(webhooks.signature_verify(secret, r["headers"]["Svc-Signature"], r["body"]) for r in receiver.received)
    finally:
        for worker in workers:
            stop(worker)
        receiver.stop()
