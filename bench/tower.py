"""Tower: action latency, actions and receipts per second under concurrency, and verify throughput.

    python bench/tower.py [-n 300] [--total 1000] [--clients 16] [--workers 4] [--agents 8]

Starts the service under gunicorn (`--workers` processes, one thread each) on a scratch database
(`<name>_bench` next to DATABASE_URL, else SQLite in a scratch directory; see bench/run.py), loads
the starter workflow and makes `--agents` agents. Then:

1. latency: one keep-alive client, `-n` POST /tower/actions one after another (a small order,
   executed: decision + ERP write + two signed receipts in one transaction), the same for a dry run
   and for POST /tower/decide; p50/p95/p99 in ms.
2. concurrency: `--clients` threads, each with its own connection, send `--total` actions spread
   over the agents; actions per second end to end and receipts appended per second (one chain per
   organization: every append serializes on the chain head).
3. verify: in this process, services.receipts_verify over the whole chain (hash, link and signature
   of each receipt, read from the database) against raw Ed25519 verification of the same payloads
   (cryptography, no database), in the same run; receipts per second each.
Client and server share the machine's CPUs: compare rows of one run, not across machines.
"""

import argparse
import http.client
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.run import _free_port, _scratch_database, _stop_server  # noqa: E402


def _prepare(env: dict, agents: int) -> dict:
    script = (
        "import json, django; django.setup()\n"
        "from django.core.management import call_command\n"
        "call_command('migrate', interactive=False, verbosity=0)\n"
        "from accounts import services as accounts\n"
        "from tower import services\n"
        "from tower.models import LegacyProduct\n"
        "org, issued = accounts.signup(org_name='bench')\n"
        "services.template_load(org=org)\n"
        "LegacyProduct.objects.filter(org=org).update(stock=10**8)\n"
        f"keys = [services.agent_create(org=org, name=f'bench{{n}}', scopes=['*']).raw for n in range({agents})]\n"
        "print(json.dumps({'key': issued.raw, 'agents': keys, 'org': str(org.pk)}))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], env=env, cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"preparing the database failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _wait_until_up(port: int, server, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"the server exited with {server.returncode}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            conn.request("GET", "/api/v1/tower/receipts/public-key")
            if conn.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.3)
    raise SystemExit(f"the server did not answer on port {port} within {timeout:.0f}s")


def _start(port: int, env: dict, workers: int):
    command = [str(Path(sys.executable).parent / "gunicorn"), "config.wsgi:application", "--bind", f"127.0.0.1:{port}",
               "--workers", str(workers), "--worker-class", "gthread", "--threads", "1", "--log-level", "warning"]
    return subprocess.Popen(command, env=env, cwd=ROOT, start_new_session=True)


class Client:
    def __init__(self, port: int, key: str):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        self.headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}

    def post(self, path: str, body: dict) -> tuple[int, dict]:
        self.conn.request("POST", path, json.dumps(body).encode(), self.headers)
        response = self.conn.getresponse()
        return response.status, json.loads(response.read())


_counter = iter(range(10**9))
_counter_lock = threading.Lock()


SKUS = ["BOLT-M8", "NUT-M8", "WASH-M8", "SCREW-5x60", "BRKT-90"]


def _order_body(dry_run=False) -> dict:
    # Orders rotate over the products: one product's stock row is locked by each order that takes from
    # it until commit, so orders of one SKU run one at a time (as they must), orders of several in parallel.
    with _counter_lock:
        n = next(_counter)
    return {"operation": "create_sales_order", "idempotency_key": f"bench-{n}", "dry_run": dry_run,
            "input": {"customer": "C-1001", "lines": [{"sku": SKUS[n % len(SKUS)], "quantity": 1}]}}


def _pcts(samples: list[float]) -> str:
    ordered = sorted(samples)

    def p(q):
        return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]

    return f"p50 {p(50):7.2f}  p95 {p(95):7.2f}  p99 {p(99):7.2f} ms  ({len(ordered) / (sum(ordered) / 1000):6.1f}/s)"


def _latency(port: int, key: str, n: int, make) -> list[float]:
    client = Client(port, key)
    for _ in range(10):
        path, body, _expect = make()
        client.post(path, body)
    samples = []
    for _ in range(n):
        path, body, expect = make()
        started = time.perf_counter()
        status, payload = client.post(path, body)
        samples.append((time.perf_counter() - started) * 1000)
        assert status == expect, (status, payload)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=300)
    parser.add_argument("--total", type=int, default=1000)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--agents", type=int, default=8)
    args = parser.parse_args()

    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "VAR_DIR": tempfile.mkdtemp(prefix="bench_tower_"),
           "TOWER_ACTIONS_PER_MONTH": "100000000", "TOWER_DECISIONS_PER_DAY": "100000000", "DEBUG": "0", "PYTHONPATH": str(ROOT)}
    drop = None
    if os.environ.get("DATABASE_URL"):
        env["DATABASE_URL"], drop = _scratch_database(os.environ["DATABASE_URL"])
    port = _free_port()
    try:
        made = _prepare(env, args.agents)
        server = _start(port, env, args.workers)
        try:
            _wait_until_up(port, server)
            backend = "PostgreSQL" if drop else "SQLite"
            print(f"Tower on gunicorn ({args.workers} workers x 1 thread), {backend}; client and server on one machine\n")
            agent = made["agents"][0]
            rows = {
                "POST actions (executed)": _latency(port, agent, args.n, lambda: ("/api/v1/tower/actions", _order_body(), 200)),
                "POST actions (dry run)": _latency(port, agent, args.n, lambda: ("/api/v1/tower/actions", _order_body(True), 200)),
                "POST decide": _latency(port, agent, args.n, lambda: ("/api/v1/tower/decide", {
                    "operation": "create_sales_order",
                    "input": {"customer": "C-1001", "lines": [{"sku": "BOLT-M8", "quantity": 1}]}}, 200)),
            }
            print("1. latency, one client, one request at a time")
            for name, samples in rows.items():
                print(f"   {name:26s} {_pcts(samples)}")

            os.environ.update({k: env[k] for k in ("DATABASE_URL", "VAR_DIR", "DJANGO_SETTINGS_MODULE") if k in env})
            import django

            django.setup()
            from tower.models import Receipt

            before = Receipt.objects.count()
            clients = [Client(port, made["agents"][i % len(made["agents"])]) for i in range(args.clients)]
            per_client = [args.total // args.clients + (1 if i < args.total % args.clients else 0) for i in range(args.clients)]

            def run(i):
                statuses = []
                for _ in range(per_client[i]):
                    statuses.append(clients[i].post("/api/v1/tower/actions", _order_body())[0])
                return statuses

            started = time.perf_counter()
            with ThreadPoolExecutor(args.clients) as pool:
                statuses = [s for chunk in pool.map(run, range(args.clients)) for s in chunk]
            elapsed = time.perf_counter() - started
            appended = Receipt.objects.count() - before
            print(f"\n2. concurrency: {args.total} actions from {args.clients} clients over {args.agents} agents, one organization")
            print(f"   {args.total / elapsed:8.1f} actions/s end to end   {appended / elapsed:8.1f} receipts appended/s"
                  f"   ({elapsed:.1f} s; statuses {sorted(set(statuses))})")

            from django.db import connection

            from accounts.models import Organization
            from core import signing
            from tower import services

            org = Organization.objects.get(pk=made["org"])
            started = time.perf_counter()
            report = services.receipts_verify(org=org)
            verify_s = time.perf_counter() - started
            assert report["ok"], report
            rows = list(Receipt.objects.filter(org=org).order_by("sequence").values_list("payload", "signature")[:10_000])
            import base64

            pairs = [(bytes(p), base64.b64decode(s)) for p, s in rows]
            key = signing.signing_key().public_key
            started = time.perf_counter()
            for payload, signature in pairs:
                key.verify(signature, payload)
            raw_s = time.perf_counter() - started
            print(f"\n3. verify {report['checked']} receipts ({connection.vendor})")
            print(f"   GET receipts/verify's service  {report['checked'] / verify_s:10.0f} receipts/s  ({verify_s * 1000:.0f} ms)")
            print(f"   raw Ed25519 verify, same data  {len(pairs) / raw_s:10.0f} receipts/s  ({raw_s * 1000:.0f} ms)")
            connection.close()
        finally:
            _stop_server(server)
    finally:
        if drop:
            if "django.db" in sys.modules:
                from django.db import connections

                connections.close_all()
            drop()


if __name__ == "__main__":
    main()
