"""The service's settings, with the bench-only routes mounted (bench/urls.py). Never used in production."""

from config.settings import *  # noqa: F403

ROOT_URLCONF = "bench.urls"
