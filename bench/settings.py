"""The service's settings, with the bench-only routes mounted (bench/urls.py). Never used in production."""

from config.settings import *  # noqa: F403

ROOT_URLCONF = "bench.urls"

# A plan with limits no benchmark reaches, so /bench/metered measures metering, never a 429.
from billing import constants as _constants  # noqa: E402 - plain dataclasses, safe before apps load

_constants.PLANS["bench"] = _constants.Plan("bench", "Bench", 0, 10**9, 10**9, "benchmark only", False)
