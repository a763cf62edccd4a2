"""Regenerate beacon/sample_report.json: a real scan of the sample site on loopback."""

import json

from django.core.management.base import BaseCommand

from beacon.sample import SAMPLE_FILE, build_sample_report


class Command(BaseCommand):
    help = "Scan the sample site on loopback and store the report served at GET /api/v1/beacon/sample."

    def handle(self, *args, **options):
        report = build_sample_report()
        SAMPLE_FILE.write_text(json.dumps(report, indent=1) + "\n")
        self.stdout.write(f"{SAMPLE_FILE}: scores {report['scores']}, {report['requests_made']} requests, {report['seconds']} s")
