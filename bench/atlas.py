"""Atlas benchmark: lookup latency and throughput in process and over HTTP, against a plain regex loop.

    DATABASE_URL=postgres://... REDIS_URL=redis://... .venv/bin/python bench/atlas.py [-n 3000] [--skip-http]

Strings: every user-agent string the registry holds (each entry's representative string and its
observed instances), plus the shared crawler list's instances. On a scratch database (`<name>_bench`,
seeded by migrate, dropped after):

1. In process: `atlas.services.lookup()` (the shared-cache version check included) over all strings;
   p50/p95/p99 per lookup and lookups per second; then, on the same strings in the same run, a plain
   loop over crawler-user-agents' 1,498 regular expressions (first match wins), and the ratio.
2. Correctness counts: strings identified as the entry they came from (or a more specific one of the
   same operator), and agent claims on the browser corpora in tests/atlas/data (false positives).
3. Over HTTP: one gunicorn worker, keyed GET /api/v1/atlas/lookup (Team tier, so no 429), metered
   and counted like any call, one keep-alive connection cycling through the strings.
"""

import argparse
import http.client
import json
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import run as bench_run  # noqa: E402


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def summary(times_ms: list[float]) -> str:
    total_s = sum(times_ms) / 1000
    return (f"p50 {pct(times_ms, 50) * 1000:.1f} µs  p95 {pct(times_ms, 95) * 1000:.1f} µs  "
            f"p99 {pct(times_ms, 99) * 1000:.1f} µs  {len(times_ms) / total_s:,.0f} lookups/s")


def in_process(env: dict, rounds: int) -> tuple[list[str], list[str]]:
    os.environ.update({k: v for k, v in env.items() if k in ("DATABASE_URL", "VAR_DIR", "DJANGO_SETTINGS_MODULE")})
    import django

    django.setup()
    from atlas import services
    from atlas.models import Agent
    from atlas.seed import SOURCES_DIR

    cases: list[tuple[str, str]] = []  # (string, slug it came from)
    for agent in Agent.objects.exclude(kind="control_token"):
        for text in {agent.user_agents, *agent.examples}:
            if text:
                cases.append((text, agent.slug))
    patterns = [re.compile(item["pattern"]) for item in json.loads((SOURCES_DIR / "crawler-user-agents.json").read_text())]
    strings = [text for text, _ in cases]
    operators = dict(Agent.objects.values_list("slug", "operator"))

    services.lookup(user_agent=strings[0])  # build the snapshot
    ours, results, baseline = [], [], []
    for round_ in range(rounds):  # interleaved rounds: both loops see the same machine load
        for text in strings:
            start = time.perf_counter_ns()
            body = services.lookup(user_agent=text)
            ours.append((time.perf_counter_ns() - start) / 1e6)
            if round_ == 0:
                results.append(body)
        for text in strings:
            start = time.perf_counter_ns()
            for pattern in patterns:
                if pattern.search(text):
                    break
            baseline.append((time.perf_counter_ns() - start) / 1e6)

    right = sum(1 for (text, slug), body in zip(cases, results, strict=True) if body["claim"] == "agent" and (
        body["agent"]["slug"] == slug or (operators.get(slug) and body["agent"]["operator"] == operators[slug])))
    lines = [f"in process, {len(strings)} registry user-agent strings ({Agent.objects.count()} entries) x {rounds} rounds, "
             "one thread",
             f"  atlas lookup()             {summary(ours)}",
             f"  regex loop (1,498 patterns) {summary(baseline)}",
             f"  ratio (regex loop / lookup): p50 {pct(baseline, 50) / pct(ours, 50):.1f}x, "
             f"throughput {sum(baseline) / sum(ours):.1f}x",
             f"  identified as their own entry (or a more specific one of the same operator): {right} of {len(cases)}"]
    for corpus in ("browsers.txt", "devices-crawlerdetect.txt"):
        browser = [line for line in (ROOT / "tests/atlas/data" / corpus).read_text().splitlines() if line.strip()]
        claims = [line for line in browser if services.lookup(user_agent=line)["claim"] == "agent"]
        lines.append(f"  {corpus}: {len(claims)} agent claims in {len(browser)} browser strings "
                     f"(false-positive rate {len(claims) / len(browser):.4%})")
    return lines, strings


def over_http(env: dict, key: str, strings: list[str], n: int) -> list[str]:
    port = bench_run._free_port()
    server = bench_run._start_server("gunicorn", port, env)
    try:
        bench_run._wait_until_up(port, server)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        headers = {"Authorization": f"Bearer {key}"}
        times = []
        for i in range(n + 100):
            text = strings[i % len(strings)][:2000]
            start = time.perf_counter_ns()
            conn.request("GET", "/api/v1/atlas/lookup?user_agent=" + quote(text, safe=""), headers=headers)
            response = conn.getresponse()
            response.read()
            took = (time.perf_counter_ns() - start) / 1e6
            if response.status != 200:
                raise SystemExit(f"lookup answered {response.status}")
            if i >= 100:
                times.append(took)
        conn.close()
    finally:
        bench_run._stop_server(server)
    return [f"over HTTP, gunicorn 1 worker, keyed and metered, one keep-alive connection (n={len(times)})",
            f"  GET /api/v1/atlas/lookup   p50 {pct(times, 50):.2f} ms  p95 {pct(times, 95):.2f} ms  "
            f"p99 {pct(times, 99):.2f} ms  {len(times) / (sum(times) / 1000):,.0f} lookups/s"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=3000, help="timed HTTP lookups")
    parser.add_argument("--rounds", type=int, default=10, help="passes over the strings in process")
    parser.add_argument("--skip-http", action="store_true")
    args = parser.parse_args()
    scratch_dir = Path(tempfile.mkdtemp(prefix="svc-bench-atlas-"))
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "bench.settings", "VAR_DIR": str(scratch_dir), "DEBUG": "0",
           "ATLAS_SIGHTINGS": "0",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    drop_database = None
    if os.environ.get("DATABASE_URL"):
        env["DATABASE_URL"], drop_database = bench_run._scratch_database(os.environ["DATABASE_URL"])
    try:
        key = bench_run._prepare(env)["key"]
        import subprocess

        subprocess.run([sys.executable, "-c", "import django; django.setup()\nfrom accounts.models import Organization\n"
                        "Organization.objects.update(atlas_tier='team')"], env=env, cwd=ROOT, check=True)
        lines, strings = in_process(env, args.rounds)
        print("\n".join(lines))
        if not args.skip_http:
            print("\n".join(over_http(env, key, strings, args.n)))
    finally:
        if drop_database is not None:
            from django.db import connections

            connections.close_all()
            drop_database()
        shutil.rmtree(scratch_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
