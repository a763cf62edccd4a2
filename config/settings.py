"""Settings for the whole service, read from the environment.

With no variable set the service runs on an embedded default that needs nothing installed:
SQLite under var/, an in-process cache, Celery tasks run eagerly, a signing key and a secret
key generated once under var/. DATABASE_URL switches to PostgreSQL, REDIS_URL to Redis for the
cache and as the Celery broker. Every variable is listed in .env.example and the README.
"""

import secrets
from pathlib import Path

import dj_database_url
from celery.schedules import crontab

from core.env import ConfigError, env_bool, env_int, env_list, env_str

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("VAR_DIR") or BASE_DIR / "var")
VAR_DIR.mkdir(parents=True, exist_ok=True)

SERVICE_VERSION = "0.21.0"


def _secret_from_file(path: Path) -> str:
    """A random secret generated on first start and kept in var/ (embedded default only)."""
    if not path.exists():
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


DEBUG = env_bool("DEBUG", False)
SECRET_KEY = env_str("SECRET_KEY") or _secret_from_file(VAR_DIR / "secret_key")
BASE_URL = env_str("BASE_URL", "http://127.0.0.1:8000").rstrip("/")
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])
# How many reverse proxies in front of us append to X-Forwarded-For; 0 trusts none of it.
TRUSTED_PROXY_COUNT = env_int("TRUSTED_PROXY_COUNT", 0, minimum=0, maximum=10)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "core",
    "accounts",
    "billing",
    "guardrails",
    "atlas",
    "beacon",
    "tower",
    "preflight",
]

MIDDLEWARE = [
    "core.middleware.RequestIdMiddleware",
    "core.middleware.BodySizeLimitMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# Database: PostgreSQL when DATABASE_URL is set, SQLite under var/ otherwise.
DATABASE_URL = env_str("DATABASE_URL")
if DATABASE_URL:
    try:
        DATABASES = {"default": dj_database_url.parse(DATABASE_URL)}
    except ValueError as exc:
        raise ConfigError(f"DATABASE_URL is not a database URL: {exc}") from None
    if DATABASES["default"]["ENGINE"].endswith("postgresql"):
        # A connection pool per process: under ASGI each request runs in a new thread, so
        # persistent per-thread connections would pile up; the pool reuses a few.
        DATABASES["default"]["CONN_MAX_AGE"] = 0
        DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
            "min_size": env_int("DB_POOL_MIN", 1, minimum=0),
            "max_size": env_int("DB_POOL_MAX", 10, minimum=1),
            "timeout": env_int("DB_POOL_TIMEOUT_SECONDS", 10, minimum=1),
        }
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": VAR_DIR / "db.sqlite3",
            "OPTIONS": {"timeout": 20, "transaction_mode": "IMMEDIATE"},
            # A file, not memory, so that test servers in other threads get their own connections.
            "TEST": {"NAME": VAR_DIR / "test.sqlite3"},
        }
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Cache (burst windows, throttles, key-directory caches): Redis when REDIS_URL is set.
REDIS_URL = env_str("REDIS_URL")
if REDIS_URL:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}}
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "svc"}}

# Celery: a real broker when one is configured, tasks run in-process (eagerly) otherwise.
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL") or REDIS_URL
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", not CELERY_BROKER_URL)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TIMEZONE = "UTC"
CELERY_BEAT_SCHEDULE = {
    "retention-purge": {"task": "accounts.tasks.retention_purge", "schedule": crontab(hour=3, minute=15)},
    "idempotency-purge": {"task": "core.tasks.idempotency_purge", "schedule": crontab(hour=3, minute=45)},
    "webhook-sweep": {"task": "accounts.tasks.webhook_sweep", "schedule": float(env_int("WEBHOOK_SWEEP_SECONDS", 15, minimum=1))},
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = Path(env_str("STATIC_ROOT") or BASE_DIR / "staticfiles")
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True  # serve app static files straight from the apps, no collectstatic needed

# Bodies over this size are refused with 413 before anything reads them.
MAX_BODY_BYTES = env_int("MAX_BODY_BYTES", 1_048_576, minimum=1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = MAX_BODY_BYTES

SECURE_CONTENT_TYPE_NOSNIFF = True
SESSION_COOKIE_HTTPONLY = True
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if TRUSTED_PROXY_COUNT else None

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["accounts.auth.ApiKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": [],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["core.parsers.JSONParser"],
    "EXCEPTION_HANDLER": "core.errors.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "core.schema.AutoSchema",
    "UNAUTHENTICATED_USER": None,
    "UNAUTHENTICATED_TOKEN": None,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Agent Guardrails, Registry, Reachability and Clearance Service",
    "DESCRIPTION": (
        "One API for Guardrails, Atlas, Beacon, Tower and Preflight. Every error body is "
        '`{"error": "<message>"}` unless a route documents otherwise. Keys are sent as '
        "`Authorization: Bearer <API_KEY>`."
    ),
    "VERSION": SERVICE_VERSION,
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "SCHEMA_PATH_PREFIX": r"/api/v[0-9]+",
}

# Accounts.
SIGNUP_EMAIL_ENABLED = env_bool("SIGNUP_EMAIL_ENABLED", False)
SIGNUP_RATE = env_str("SIGNUP_RATE", "20/h")
API_KEYS_MAX_ACTIVE = env_int("API_KEYS_MAX_ACTIVE", 10, minimum=1, maximum=1000)
# Outgoing email (claim confirmations): the console by default, SMTP when EMAIL_HOST is set.
_EMAIL_HOST = env_str("EMAIL_HOST")
MAILERS = {
    "default": {
        "BACKEND": "django.core.mail.backends.smtp.EmailBackend" if _EMAIL_HOST else "django.core.mail.backends.console.EmailBackend",
        "OPTIONS": {
            "host": _EMAIL_HOST,
            "port": env_int("EMAIL_PORT", 587, minimum=1, maximum=65535),
            "username": env_str("EMAIL_HOST_USER"),
            "password": env_str("EMAIL_HOST_PASSWORD"),
            "use_tls": env_bool("EMAIL_USE_TLS", True),
        } if _EMAIL_HOST else {},
    }
}
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "no-reply@localhost")

# Billing: payment routes answer 503 until a payment processor is configured.
STRIPE_SECRET_KEY = env_str("STRIPE_SECRET_KEY")
BILLING_ENABLED = bool(STRIPE_SECRET_KEY)

# Signing (Tower receipts, Preflight verdicts): a PEM Ed25519 private key, or a file generated once.
SIGNING_KEY_PEM = env_str("SIGNING_KEY_PEM")
SIGNING_KEY_FILE = Path(env_str("SIGNING_KEY_FILE") or VAR_DIR / "signing_key.pem")

# Outbound HTTP (core.safe_http).
SAFE_HTTP_USER_AGENT = env_str("SAFE_HTTP_USER_AGENT", f"SvcBot/1.0 (+{BASE_URL})")
SAFE_HTTP_TIMEOUT_SECONDS = env_int("SAFE_HTTP_TIMEOUT_SECONDS", 10, minimum=1, maximum=120)
SAFE_HTTP_MAX_BYTES = env_int("SAFE_HTTP_MAX_BYTES", 2_000_000, minimum=1024)
SAFE_HTTP_MAX_REDIRECTS = env_int("SAFE_HTTP_MAX_REDIRECTS", 5, minimum=0, maximum=20)
# The whole fetch, redirects and body included; SAFE_HTTP_TIMEOUT_SECONDS caps each connect and read.
SAFE_HTTP_DEADLINE_SECONDS = env_int("SAFE_HTTP_DEADLINE_SECONDS", 30, minimum=1, maximum=600)
# Test-only: lets safe_http reach loopback (never private or metadata space). Never set in production.
SAFE_HTTP_ALLOW_LOOPBACK = env_bool("SAFE_HTTP_ALLOW_LOOPBACK", False)

# Domain proof: DNS servers to ask ("ip" or "ip:port", comma-separated; the system's when empty)
# and where the proof file is looked for ({domain} and {path} are filled in).
DOMAIN_PROOF_NAMESERVERS = env_list("DOMAIN_PROOF_NAMESERVERS", [])
DOMAIN_PROOF_DNS_TIMEOUT_SECONDS = env_int("DOMAIN_PROOF_DNS_TIMEOUT_SECONDS", 5, minimum=1, maximum=30)
DOMAIN_PROOF_URLS = env_list("DOMAIN_PROOF_URLS", ["https://{domain}{path}", "http://{domain}{path}"])
RECOVERY_RATE = env_str("RECOVERY_RATE", "10/h")
RECOVERY_VERIFY_RATE = env_str("RECOVERY_VERIFY_RATE", "30/h")
API_KEYS_MAX_ACTIVE_UNVERIFIED = env_int("API_KEYS_MAX_ACTIVE_UNVERIFIED", 3, minimum=1, maximum=1000)

# Webhooks: seconds before each retry (one retry per entry), the lease a worker holds a delivery
# for (a worker that dies frees it when the lease runs out), and the time cap of one POST.
WEBHOOK_RETRY_DELAYS = [float(x) for x in env_list("WEBHOOK_RETRY_DELAYS", ["10", "60", "300", "1800", "7200", "21600"])]
WEBHOOK_LEASE_SECONDS = env_int("WEBHOOK_LEASE_SECONDS", 60, minimum=1)
WEBHOOK_TIMEOUT_SECONDS = env_int("WEBHOOK_TIMEOUT_SECONDS", 10, minimum=1, maximum=60)

IDEMPOTENCY_TTL_SECONDS = 24 * 3600
# A request that holds an idempotency key longer than this is presumed dead and its key freed.
IDEMPOTENCY_LOCK_SECONDS = env_int("IDEMPOTENCY_LOCK_SECONDS", 300, minimum=5)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    # urllib3 logs full request lines (query strings can hold tokens) at DEBUG: keep it quieter.
    "loggers": {"django.request": {"level": "ERROR"}, "urllib3": {"level": "WARNING"}},
}

# Preflight: the simulator ("litesvm" in-process, the default; or "rpc": simulateTransaction on a
# node), the node's JSON-RPC URL (also read for reports, and for LiteSVM forking when
# PREFLIGHT_LITESVM_FORK is on), operator-supplied account state for LiteSVM (a JSON file of address
# to account in the node's base64 shape), and the most accounts one check reads.
PREFLIGHT_SIMULATOR = env_str("PREFLIGHT_SIMULATOR", "litesvm")
if PREFLIGHT_SIMULATOR not in ("litesvm", "rpc"):
    raise ConfigError(f"PREFLIGHT_SIMULATOR must be 'litesvm' or 'rpc', not {PREFLIGHT_SIMULATOR!r}.")
PREFLIGHT_RPC_URL = env_str("PREFLIGHT_RPC_URL")
PREFLIGHT_RPC_COMMITMENT = env_str("PREFLIGHT_RPC_COMMITMENT", "confirmed")
PREFLIGHT_RPC_TIMEOUT_SECONDS = env_int("PREFLIGHT_RPC_TIMEOUT_SECONDS", 10, minimum=1, maximum=60)
PREFLIGHT_LITESVM_ACCOUNTS_FILE = env_str("PREFLIGHT_LITESVM_ACCOUNTS_FILE")
PREFLIGHT_LITESVM_FORK = env_bool("PREFLIGHT_LITESVM_FORK", False)
PREFLIGHT_MAX_ACCOUNTS = env_int("PREFLIGHT_MAX_ACCOUNTS", 64, minimum=2, maximum=100)
PREFLIGHT_REPORT_RATE = env_str("PREFLIGHT_REPORT_RATE", "60/h")

# Beacon: the conduct of one check (requests, time, parallel fetches), the MCP Registry searched, the
# model judge (OpenAI-compatible; the embedded judge when BEACON_JUDGE_URL is empty), and payment.
BEACON_MAX_REQUESTS = env_int("BEACON_MAX_REQUESTS", 24, minimum=5, maximum=50)
BEACON_CHECK_SECONDS = env_int("BEACON_CHECK_SECONDS", 60, minimum=5, maximum=600)
BEACON_FETCH_SECONDS = env_int("BEACON_FETCH_SECONDS", 10, minimum=1, maximum=60)
BEACON_MAX_REDIRECTS = env_int("BEACON_MAX_REDIRECTS", 3, minimum=0, maximum=10)
BEACON_PARALLEL_FETCHES = env_int("BEACON_PARALLEL_FETCHES", 6, minimum=1, maximum=16)
BEACON_MCP_REGISTRY_URL = env_str("BEACON_MCP_REGISTRY_URL", "https://registry.modelcontextprotocol.io")
BEACON_JUDGE_URL = env_str("BEACON_JUDGE_URL")
BEACON_JUDGE_KEY = env_str("BEACON_JUDGE_KEY")
BEACON_JUDGE_MODEL = env_str("BEACON_JUDGE_MODEL", "gpt-4o-mini")
BEACON_JUDGE_SECONDS = env_int("BEACON_JUDGE_SECONDS", 30, minimum=1, maximum=120)
# While billing is not enabled a check runs without payment (development and self-hosting); false holds
# it at awaiting_payment instead.
BEACON_FREE_WHEN_BILLING_DISABLED = env_bool("BEACON_FREE_WHEN_BILLING_DISABLED", True)
BEACON_START_RATE = env_str("BEACON_START_RATE", "30/h")
BEACON_LEASE_SECONDS = env_int("BEACON_LEASE_SECONDS", 180, minimum=10)
BEACON_MAX_ATTEMPTS = env_int("BEACON_MAX_ATTEMPTS", 3, minimum=1, maximum=10)
CELERY_BEAT_SCHEDULE["beacon-sweep"] = {"task": "beacon.tasks.check_sweep", "schedule": float(env_int("BEACON_SWEEP_SECONDS", 60, minimum=5))}

# Tower: limits per organization (active agents; decisions, i.e. POST decide and dry runs, per UTC day;
# actions per UTC month).
TOWER_AGENTS_MAX_ACTIVE = env_int("TOWER_AGENTS_MAX_ACTIVE", 25, minimum=1, maximum=10_000)
TOWER_DECISIONS_PER_DAY = env_int("TOWER_DECISIONS_PER_DAY", 10_000, minimum=1)
TOWER_ACTIONS_PER_MONTH = env_int("TOWER_ACTIONS_PER_MONTH", 5_000, minimum=1)

# Payments. Stripe (enabled by STRIPE_SECRET_KEY above): the API base (a test server in tests), the
# webhook endpoint's signing secret (whsec_...), and the recurring Price ids per plan, Atlas tier and
# Tower as "starter=price_...,growth=price_...,scale=price_...,atlas_pro=price_...,atlas_team=price_...,tower=price_...".
# Credit packs and Beacon's card check are one-time payments priced from billing/constants.py.
STRIPE_API_BASE = env_str("STRIPE_API_BASE", "https://api.stripe.com")
STRIPE_WEBHOOK_SECRET = env_str("STRIPE_WEBHOOK_SECRET")
STRIPE_PRICES = dict(item.split("=", 1) for item in env_list("STRIPE_PRICES") if "=" in item)
STRIPE_TIMEOUT_SECONDS = env_int("STRIPE_TIMEOUT_SECONDS", 30, minimum=1, maximum=120)
# Where a person lands after a checkout or the portal when the caller gives no URL.
BILLING_RETURN_URL = env_str("BILLING_RETURN_URL", f"{BASE_URL}/docs")
# x402 pay-per-use (USDC): enabled when X402_PAY_TO (the receiving address) is set. The network is written
# the v2 way (CAIP-2: eip155:8453 is Base mainnet, what the spec's v1 name "base" means; eip155:84532 is
# Base Sepolia). The facilitator verifies and settles: its URL, and a bearer token when it takes one.
X402_PAY_TO = env_str("X402_PAY_TO")
X402_NETWORK = env_str("X402_NETWORK", "eip155:8453")
X402_FACILITATOR_URL = env_str("X402_FACILITATOR_URL", "https://api.cdp.coinbase.com/platform/v2/x402")
X402_FACILITATOR_TOKEN = env_str("X402_FACILITATOR_TOKEN")
# Or a dotted path to a callable returning per-call headers ({"verify": {...}, "settle": {...}}), e.g. a CDP JWT maker.
X402_FACILITATOR_HEADERS = env_str("X402_FACILITATOR_HEADERS")
X402_FACILITATOR_SECONDS = env_int("X402_FACILITATOR_SECONDS", 60, minimum=1, maximum=300)
X402_ENABLED = bool(X402_PAY_TO)
SPECTACULAR_SETTINGS["TAGS"] = [*SPECTACULAR_SETTINGS.get("TAGS", []), {
    "name": "Billing",
    "description": "Plans, subscriptions (Stripe Checkout, subscribe with a `pm_...`, prorated switch, cancel at period end, "
                   "portal) and prepaid credit packs (card or USDC). Every payment route answers 503 while billing is not "
                   "enabled (`billing_enabled` in GET /api/v1/plans).",
}, {
    "name": "Payments (x402)",
    "description": "Pay per call without an account: x402 v2, USDC on Base, network `eip155:8453` (the spec's `base` is the "
                   "v1 name). Evaluate $0.002, Atlas lookup $0.001, Atlas report $9, Beacon $1, Preflight $0.01. Bad input "
                   "is a 400 before payment; without `PAYMENT-SIGNATURE` the answer is 402 with `PAYMENT-REQUIRED` (base64 "
                   "JSON, also in the body with `error`); paid answers carry `PAYMENT-RESPONSE`. A failed request is never "
                   "settled, an authorization is accepted once, and settlement happens before the answer leaves. The "
                   "official client's default cap is $1 per payment: raise it for the $9 report.",
}]

# Atlas: the daily refresh fetches the operators' published IP lists through core.safe_http (off: the bundled
# CC0 copies only); requests to this service by registered agents are counted per agent per day (no addresses).
ATLAS_REFRESH_FETCH = env_bool("ATLAS_REFRESH_FETCH", True)
ATLAS_SIGHTINGS = env_bool("ATLAS_SIGHTINGS", True)
# Each process checks the shared registry version at most this often, and rebuilds its snapshot at least this often.
ATLAS_REGISTRY_RECHECK_SECONDS = float(env_int("ATLAS_REGISTRY_RECHECK_SECONDS", 2, minimum=0, maximum=3600))
ATLAS_REGISTRY_MAX_AGE_SECONDS = float(env_int("ATLAS_REGISTRY_MAX_AGE_SECONDS", 300, minimum=1, maximum=86400))
if ATLAS_SIGHTINGS:
    MIDDLEWARE = [*MIDDLEWARE, "atlas.middleware.SightingMiddleware"]
CELERY_BEAT_SCHEDULE["atlas-refresh"] = {"task": "atlas.tasks.atlas_refresh", "schedule": crontab(hour=2, minute=30)}
CELERY_BEAT_SCHEDULE["atlas-traffic-report"] = {"task": "atlas.tasks.atlas_traffic_report_build", "schedule": crontab(hour=0, minute=20)}
CELERY_BEAT_SCHEDULE["atlas-datasets"] = {"task": "atlas.tasks.atlas_datasets_build", "schedule": crontab(hour=0, minute=40)}

# Guardrails: the longest input a keyed caller may evaluate (keyless callers: 2,000, billing/constants.py),
# and how many feedback messages one address may post a day.
GUARDRAILS_MAX_INPUT_CHARS = env_int("GUARDRAILS_MAX_INPUT_CHARS", 50_000, minimum=2_000, maximum=1_000_000)
GUARDRAILS_FEEDBACK_DAILY = env_int("GUARDRAILS_FEEDBACK_DAILY", 20, minimum=1, maximum=10_000)

# Surfaces (MCP at /mcp, A2A at /a2a; surfaces/): the MCP SDK and the HTTP clients log every request at INFO
# (request lines can carry query strings); keep them to warnings.
LOGGING["loggers"].update({name: {"level": "WARNING"} for name in ("mcp", "a2a", "httpx", "httpx2")})
