"""Guardrails benchmark: engine latency per input size and language, evaluate over HTTP with records
on the configured database, resident memory per worker, and accuracy/calibration on the held-out split.

    DATABASE_URL=postgres://... REDIS_URL=redis://... .venv/bin/python bench/guardrails.py [-n 400] [--skip-http]

1. In process: the default rule set over inputs of 200 and 2,000 characters built from held-out
   texts of each of the 14 languages (server-side latency: no HTTP, no database); p50/p95/p99.
2. Over HTTP: one gunicorn worker (bench.settings, a plan no benchmark reaches), keyed
   POST /api/v1/evaluate of 200 and 2,000 characters, each stored as a record; p50/p99 and
   evaluations per second over one keep-alive connection; the worker's resident memory after.
3. The held-out split through the default rule set: action accuracy, ECE and Brier score.
"""

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import run as bench_run  # noqa: E402
from guardrails import measure, splits  # noqa: E402
from guardrails.engine import encoder  # noqa: E402
from guardrails.engine import rules as engine  # noqa: E402


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def texts_of_size(lang: str, size: int, rows: list[dict], count: int = 20) -> list[str]:
    """`count` distinct texts of `size` characters, each of held-out rows of `lang` drawn in its own order."""
    pool = [r["text"] for r in rows if r["lang"] == lang]
    out: list[str] = []
    for k in range(count * 3):
        if len(out) == count or not pool:
            break
        order = random.Random(f"{lang}-{size}-{k}").sample(pool, len(pool))
        chunk = ""
        for text in order * (size // max(1, sum(map(len, pool))) + 1):
            if len(chunk) >= size:
                break
            chunk += text + " "
        if chunk[:size] not in out:
            out.append(chunk[:size])
    return out


def engine_latency(n_per_lang: int) -> dict:
    rows = splits.rows("heldout")
    spec = engine.SYSTEM_RULE_SETS["default"]["rules"]
    engine.evaluate("warm up the models", spec)
    report = {}
    for size in (200, 2000):
        all_times = []
        per_lang = {}
        for lang in splits.LANGUAGES:
            times = []
            texts = texts_of_size(lang, size, rows)
            for k in range(n_per_lang):
                text = texts[k % len(texts)]
                encoder.forget()  # every input new to the service, as in real traffic
                start = time.perf_counter()
                engine.evaluate(text, spec)
                times.append((time.perf_counter() - start) * 1000)
            per_lang[lang] = statistics.median(times)
            all_times += times
        report[size] = {"p50": pct(all_times, 50), "p95": pct(all_times, 95), "p99": pct(all_times, 99), "per_lang_p50": per_lang}
    return report


def rss_kb(pid: int) -> int:
    total = 0
    for child in [pid, *_children(pid)]:
        try:
            for line in Path(f"/proc/{child}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total = max(total, int(line.split()[1]))
        except OSError:
            continue
    return total


def _children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def http_bench(n: int) -> dict:
    scratch_dir = Path(tempfile.mkdtemp(prefix="svc-bench-gr-"))
    built = encoder.ensure_built()  # the worker finds the encoder's graph where a deployment's `make` put it
    shutil.copy(built, scratch_dir / built.name)
    env = {
        **os.environ, "DJANGO_SETTINGS_MODULE": "bench.settings", "VAR_DIR": str(scratch_dir),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])), "DEBUG": "0",
    }
    drop_database = None
    if os.environ.get("DATABASE_URL"):
        env["DATABASE_URL"], drop_database = bench_run._scratch_database(os.environ["DATABASE_URL"])
    server = None
    results = {}
    try:
        key = bench_run._prepare(env)["key"]
        port = bench_run._free_port()
        server = bench_run._start_server("gunicorn", port, env)
        bench_run._wait_until_up(port, server)
        rows = splits.rows("heldout")
        for size in (200, 2000):
            # Distinct texts of every language, more of them than the encoder's cache holds, so that
            # no timed request is answered from that cache.
            bodies = [json.dumps({"input": text}).encode() for lang in splits.LANGUAGES
                      for text in texts_of_size(lang, size, rows, count=60)]
            random.Random(size).shuffle(bodies)
            case = bench_run.Case(f"evaluate {size} chars", "POST", "/api/v1/evaluate",
                                  {"Authorization": f"Bearer {key}"}, bodies=bodies)
            result = bench_run._measure(port, case, n, 30, 30.0)
            results[size] = {"p50": result.percentile(50), "p99": result.percentile(99), "rps": result.rps, "n": len(result.latencies_ms)}
        results["rss_mb"] = rss_kb(server.pid) / 1024
    finally:
        if server is not None:
            bench_run._stop_server(server)
        if drop_database is not None:
            drop_database()
        shutil.rmtree(scratch_dir, ignore_errors=True)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=400, help="timed HTTP requests per size")
    parser.add_argument("--per-lang", type=int, default=40, help="engine runs per language and size")
    parser.add_argument("--skip-http", action="store_true")
    args = parser.parse_args()

    latency = engine_latency(args.per_lang)
    print(f"engine, default rule set, {os.cpu_count()} CPUs, one thread ({args.per_lang} runs per language and size)")
    for size, r in latency.items():
        print(f"  {size:5d} chars  p50 {r['p50']:.2f} ms  p95 {r['p95']:.2f} ms  p99 {r['p99']:.2f} ms")
        print("        per language p50: " + ", ".join(f"{k} {v:.1f}" for k, v in r["per_lang_p50"].items()))
    if not args.skip_http:
        http = http_bench(args.n)
        database = "PostgreSQL" if os.environ.get("DATABASE_URL") else "SQLite"
        print(f"\nHTTP, gunicorn 1 worker, {database}, records stored, one keep-alive connection")
        for size in (200, 2000):
            r = http[size]
            print(f"  {size:5d} chars  p50 {r['p50']:.2f} ms  p99 {r['p99']:.2f} ms  {r['rps']:.0f} evaluations/s  (n={r['n']})")
        print(f"  worker resident memory after the run: {http['rss_mb']:.0f} MB")
    results = measure.run(measure.rows("heldout"))
    m = measure.calibration_metrics(results)
    print(f"\nheld-out split ({m['n']} rows): action accuracy {m['accuracy']:.3f}, ECE {m['ece']:.4f}, Brier {m['brier']:.4f}")


if __name__ == "__main__":
    main()
