"""Seconds per Beacon check against the local sample site, sequential and with parallel fetching.

    python bench/beacon.py [-n 10] [--latency-ms 0,50]

Serves the sample site (beacon/sample_site.py: every surface present, an MCP endpoint, a registry)
on loopback and scans it N times per case with the embedded judge, through core.safe_http exactly
as a real check does. Cases: parallel fetches 1 (sequential) and BEACON_PARALLEL_FETCHES (6), each
with the site answering at once and with an added per-request latency (a stand-in for a remote
site's round trip). Prints the median and worst seconds per check and the requests each made.
"""

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("VAR_DIR", "/tmp/var_bench_beacon")

import django  # noqa: E402

django.setup()
import logging  # noqa: E402

from django.test import override_settings  # noqa: E402

logging.disable(logging.INFO)

from beacon import sample_site  # noqa: E402
from beacon.judge import EmbeddedJudge  # noqa: E402
from beacon.scan import scan_site  # noqa: E402
from core import safe_http  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("-n", type=int, default=10)
    parser.add_argument("--latency-ms", default="0,50")
    args = parser.parse_args()
    server, url = sample_site.serve_sample()
    registry = f"http://{sample_site.SAMPLE_NAME}:{server.port}/registry"
    pages = dict(server.routes)
    print(f"Beacon: {args.n} scans per case of the sample site on loopback, embedded judge")
    print(f"{'latency':>8} {'parallel':>8} {'median s':>9} {'worst s':>8} {'requests':>8}")
    try:
        with safe_http.allow_loopback(), override_settings(BEACON_MCP_REGISTRY_URL=registry), sample_site.names_resolve_to_loopback():
            for latency in [int(x) for x in args.latency_ms.split(",")]:
                for page in pages.values():
                    if isinstance(page, sample_site.Page):
                        page.delay = latency / 1000
                server.routes["/mcp"] = _delayed(sample_site.mcp_responder(), latency / 1000)
                for parallel in (1, 6):
                    times, requests = [], set()
                    for _ in range(args.n):
                        started = time.monotonic()
                        report = scan_site(url, judge=EmbeddedJudge(), parallel=parallel)
                        times.append(time.monotonic() - started)
                        requests.add(report["requests_made"])
                        assert report["scores"]["read"] == 100, report["scores"]
                    print(f"{latency:>6}ms {parallel:>8} {statistics.median(times):>9.3f} {max(times):>8.3f} {'/'.join(map(str, sorted(requests))):>8}")
    finally:
        server.stop()


def _delayed(handler, seconds):
    def handle(request):
        time.sleep(seconds)
        return handler(request)
    return handle


if __name__ == "__main__":
    main()
