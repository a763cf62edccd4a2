"""The sample report: a real scan of the sample site (beacon/sample_site.py), stored in sample_report.json.

`manage.py beacon_sample` serves the sample site on loopback, scans it with the embedded judge and
writes the file; tests/beacon checks that a fresh scan gives the same verdicts.
"""

import functools
import json
from pathlib import Path

SAMPLE_FILE = Path(__file__).with_name("sample_report.json")
NOTE = ("A real scan of the sample site that ships with Beacon (beacon/sample_site.py), served on loopback and "
        "scanned by `manage.py beacon_sample`; not a customer's site.")


@functools.cache
def sample_report() -> dict:
    return {"note": NOTE, "report": json.loads(SAMPLE_FILE.read_text())}


def build_sample_report() -> dict:
    """Serve the sample site on loopback and scan it; returns the report."""
    from django.test import override_settings

    from core import safe_http

    from . import sample_site
    from .judge import EmbeddedJudge
    from .scan import scan_site

    server, url = sample_site.serve_sample()
    try:
        registry = f"http://{sample_site.SAMPLE_NAME}:{server.port}/registry"
        with safe_http.allow_loopback(), override_settings(BEACON_MCP_REGISTRY_URL=registry), sample_site.names_resolve_to_loopback():
            return scan_site(url, judge=EmbeddedJudge())
    finally:
        server.stop()
