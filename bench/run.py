"""Per-request overhead of authentication, errors and idempotency, measured on a real server.

    python bench/run.py [--server gunicorn|uvicorn] [-n 2000] [--warmup 200] [--budget 9]

Starts the service (bench.settings: every route plus /bench/bare and /bench/idempotent) in one
server process on 127.0.0.1 and a free port, against PostgreSQL and Redis when DATABASE_URL and
REDIS_URL are set (in a scratch database `<name>_bench`, created and dropped here), else against
SQLite in a scratch directory. This process is the client: one keep-alive connection, requests
one after another, a warm-up, then up to N timed requests per case (a slow case stops after
--budget seconds, so the whole run stays near two minutes). It prints p50/p95/p99 latency,
requests per second and each case's p50 over its bare baseline (the same server, the same run).
Client and server share this machine's CPUs, so compare rows with each other, not across machines.

The default server is gunicorn (WSGI, one worker, one thread), which keeps its database connection
between requests as DB_CONN_MAX_AGE asks. Under uvicorn (ASGI) Django runs each request's sync code
in a new thread, so every keyed request opens a new database connection: `--server uvicorn` shows it.
"""

import argparse
import http.client
import itertools
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Case:
    name: str
    method: str
    path: str
    headers: dict
    body: bytes | None = None
    expect: int = 200
    baseline: str | None = None  # the case whose p50 this one's overhead is measured against
    fresh_idempotency_key: bool = False  # a new Idempotency-Key on every request
    bodies: list[bytes] | None = None  # when set, requests cycle through these instead of `body`


@dataclass
class Result:
    case: Case
    latencies_ms: list[float]
    elapsed_s: float

    def percentile(self, p: float) -> float:
        ordered = sorted(self.latencies_ms)
        return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]

    @property
    def rps(self) -> float:
        return len(self.latencies_ms) / self.elapsed_s


# Scratch database and directory.


def _scratch_database(url: str) -> tuple[str, Callable[[], None]]:
    """A fresh `<name>_bench` database on the server of `url`; returns its URL and a function that drops it."""
    import dj_database_url
    import psycopg

    config = dj_database_url.parse(url)
    name = f"{config['NAME']}_bench"
    admin = {
        "host": config["HOST"] or "127.0.0.1",
        "port": config["PORT"] or 5432,
        "user": config["USER"],
        "password": config["PASSWORD"] or None,
        "dbname": "postgres",
        "autocommit": True,
    }

    def drop():
        with psycopg.connect(**admin) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    drop()
    with psycopg.connect(**admin) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return urlsplit(url)._replace(path=f"/{name}").geturl(), drop


def _prepare(env: dict) -> dict:
    """Migrate the scratch database and make an organization; returns the keys the cases send."""
    script = (
        "import json, django; django.setup()\n"
        "from django.core.management import call_command\n"
        "call_command('migrate', interactive=False, verbosity=0)\n"
        "from accounts import services\n"
        "org, issued = services.signup(org_name='bench')\n"
        "org.plan = 'bench'; org.save(update_fields=['plan'])\n"
        "print(json.dumps({'key': issued.raw}))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], env=env, cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"preparing the database failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


# The server.


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _start_server(kind: str, port: int, env: dict) -> subprocess.Popen:
    bin_dir = Path(sys.executable).parent
    if kind == "uvicorn":
        command = [
            str(bin_dir / "uvicorn"),
            "config.asgi:application",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            "1",
            "--no-access-log",
            "--log-level",
            "warning",
        ]
    else:
        command = [
            str(bin_dir / "gunicorn"),
            "config.wsgi:application",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            "1",
            "--worker-class",  # gthread with one thread: one request at a time, and keep-alive
            "gthread",
            "--threads",
            "1",
            "--log-level",
            "warning",
        ]
    return subprocess.Popen(command, env=env, cwd=ROOT, start_new_session=True)


def _wait_until_up(port: int, server: subprocess.Popen, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"the server exited with {server.returncode} before answering")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/api/v1/health")
            if conn.getresponse().status == 200:
                conn.close()
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"the server did not answer on port {port} within {timeout:.0f}s")


def _stop_server(server: subprocess.Popen) -> None:
    if server.poll() is None:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


# The client.


def _measure(port: int, case: Case, n: int, warmup: int, budget: float) -> Result:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    latencies = []
    bodies = itertools.cycle(case.bodies or [case.body])

    def once(timed: bool) -> None:
        headers = dict(case.headers)
        if case.fresh_idempotency_key:
            headers["Idempotency-Key"] = uuid.uuid4().hex
        body = next(bodies)
        if body is not None:
            headers["Content-Type"] = "application/json"
        start = time.perf_counter_ns()
        conn.request(case.method, case.path, body=body, headers=headers)
        response = conn.getresponse()
        response.read()
        took = time.perf_counter_ns() - start
        if response.status != case.expect:
            raise SystemExit(f"{case.name}: expected {case.expect}, got {response.status}")
        if timed:
            latencies.append(took / 1e6)

    for _ in range(warmup):
        once(False)
    began = time.perf_counter()
    for _ in range(n):
        once(True)
        if time.perf_counter() - began > budget:
            break  # a slow case stops early, so the run stays bounded; the table shows its n
    elapsed = time.perf_counter() - began
    conn.close()
    return Result(case, latencies, elapsed)


def _cases(key: str) -> list[Case]:
    bearer = {"Authorization": f"Bearer {key}"}
    body = json.dumps({"text": "hello", "n": 1}).encode()
    replay_key = {"Idempotency-Key": f"bench-replay-{uuid.uuid4().hex}"}
    return [
        Case("bare GET (no auth)", "GET", "/bench/bare", {}),
        Case("GET /api/v1/me, valid key", "GET", "/api/v1/me", bearer, baseline="bare GET (no auth)"),
        Case(
            "401: unknown key",
            "GET",
            "/api/v1/me",
            {"Authorization": "Bearer svc_live_" + "x" * 43},
            expect=401,
            baseline="bare GET (no auth)",
        ),
        Case("401: no key", "GET", "/api/v1/me", {}, expect=401, baseline="bare GET (no auth)"),
        Case("404: unknown route", "GET", "/api/v1/no-such-route", {}, expect=404, baseline="bare GET (no auth)"),
        Case("bare POST (no auth)", "POST", "/bench/bare", {}, body),
        Case("POST keyed, no Idempotency-Key", "POST", "/bench/idempotent", bearer, body, baseline="bare POST (no auth)"),
        Case(
            "POST Idempotency-Key, first use",
            "POST",
            "/bench/idempotent",
            bearer,
            body,
            baseline="bare POST (no auth)",
            fresh_idempotency_key=True,
        ),
        Case(
            "POST Idempotency-Key, replay",
            "POST",
            "/bench/idempotent",
            {**bearer, **replay_key},
            body,
            baseline="bare POST (no auth)",
        ),
        Case(
            "POST metered (reserve + headers)",
            "POST",
            "/bench/metered",
            bearer,
            body,
            baseline="POST keyed, no Idempotency-Key",
        ),
        Case("bare GET again (drift check)", "GET", "/bench/bare", {}, baseline="bare GET (no auth)"),
    ]


def _table(results: list[Result]) -> str:
    by_name = {r.case.name: r for r in results}
    columns = ["case", "status", "n", "p50 ms", "p95 ms", "p99 ms", "req/s", "p50 over its bare"]
    rows = []
    for r in results:
        over = ""
        if r.case.baseline:
            over = f"{r.percentile(50) - by_name[r.case.baseline].percentile(50):+.3f} ms"
        rows.append(
            [
                r.case.name,
                str(r.case.expect),
                str(len(r.latencies_ms)),
                f"{r.percentile(50):.3f}",
                f"{r.percentile(95):.3f}",
                f"{r.percentile(99):.3f}",
                f"{r.rps:.0f}",
                over,
            ]
        )
    widths = [max(len(row[i]) for row in [columns, *rows]) for i in range(len(columns))]

    def line(cells):
        return (
            "| "
            + " | ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True)))
            + " |"
        )

    return "\n".join([line(columns), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *(line(row) for row in rows)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", choices=["gunicorn", "uvicorn"], default="gunicorn")
    parser.add_argument("-n", type=int, default=2000, help="timed requests per case")
    parser.add_argument("--warmup", type=int, default=200, help="untimed requests per case first")
    parser.add_argument("--budget", type=float, default=9.0, help="seconds of timed requests per case, at most")
    args = parser.parse_args()

    scratch_dir = Path(tempfile.mkdtemp(prefix="svc-bench-"))
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "bench.settings",
        "VAR_DIR": str(scratch_dir),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        "DEBUG": "0",
    }
    drop_database = None
    if os.environ.get("DATABASE_URL"):
        env["DATABASE_URL"], drop_database = _scratch_database(os.environ["DATABASE_URL"])
    server = None
    try:
        keys = _prepare(env)
        port = _free_port()
        server = _start_server(args.server, port, env)
        _wait_until_up(port, server)
        results = []
        for case in _cases(keys["key"]):
            results.append(_measure(port, case, args.n, args.warmup, args.budget))
            print(f"  measured: {case.name}", file=sys.stderr)
    finally:
        if server is not None:
            _stop_server(server)
        if drop_database is not None:
            drop_database()
        shutil.rmtree(scratch_dir, ignore_errors=True)

    database = "PostgreSQL" if os.environ.get("DATABASE_URL") else "SQLite"
    cache = "Redis" if os.environ.get("REDIS_URL") else "in-process cache"
    print(
        f"\n{args.server}, 1 worker, {database} + {cache}; per case {args.warmup} warm-up requests, then up to {args.n} "
        f"timed ({args.budget:.0f} s at most); one keep-alive connection; {os.cpu_count()} CPUs shared by client and server\n"
    )
    print(_table(results))
    first, last = results[0].percentile(50), results[-1].percentile(50)
    print(f"\nDrift: bare GET p50 {first:.3f} ms first, {last:.3f} ms last; differences of that size are noise.")


if __name__ == "__main__":
    main()
