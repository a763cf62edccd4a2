"""API key material: generation, keyed hashing, the visible prefix."""

import hashlib
import hmac
import secrets

from django.conf import settings

ORG_KEY_PREFIX = "svc_live_"
VISIBLE_RANDOM_CHARS = 6


def _pepper() -> bytes:
    return hashlib.sha256(b"svc-api-key-hash:" + settings.SECRET_KEY.encode()).digest()


def key_hash(raw_key: str) -> str:
    """HMAC-SHA256 of the key under a server secret: a leaked table alone cannot be brute-forced."""
    return hmac.new(_pepper(), raw_key.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()


def key_generate(prefix: str = ORG_KEY_PREFIX) -> tuple[str, str, str]:
    """A new key: (raw key, shown once; its visible prefix; its hash)."""
    raw = prefix + secrets.token_urlsafe(32)
    return raw, raw[: len(prefix) + VISIBLE_RANDOM_CHARS], key_hash(raw)


def hashes_equal(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode(), b.encode())
