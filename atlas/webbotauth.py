"""Web Bot Auth: RFC 9421 signatures per the IETF webbotauth drafts, key directories, and the verdict.

The procedure (notes/atlas.md section 4.2): select the labels tagged `web-bot-auth` that carry
`keyid`, `created` and `expires` and cover `@authority` (or `@target-uri`) and, when sent, the
`signature-agent` member of their label; check freshness; resolve the Signature-Agent (dictionary
form, or the legacy bare string) to its key directory; fetch the directory through core.safe_http
(https, no redirects, size and key caps), cached in the database and never evicted by a failed
fetch; look the key up by (directory, keyid), never by keyid alone; refuse known test keys; then
check the signature with `http-message-signatures` (Ed25519, or RSA-PSS-SHA512).

Outcomes: `verified` (key K of directory U signed this request), `invalid` (bad signature,
coverage, freshness, test key), `unverified` (no Signature-Agent, directory unreachable, key not
in it), `absent` (no Web Bot Auth signature at all).
"""

import base64
import hashlib
import json
import logging
import time
from dataclasses import asdict, dataclass
from datetime import timedelta
from urllib.parse import urlsplit, urlunsplit

import http_sf
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from django.conf import settings
from http_message_signatures import (
    HTTPMessageSignaturesException,
    HTTPMessageVerifier,
    InvalidSignature,
    MappingKeyResolver,
    algorithms,
)
from requests.structures import CaseInsensitiveDict

from core import clock, safe_http

log = logging.getLogger(__name__)

TAG = "web-bot-auth"
DIRECTORY_PATH = "/.well-known/http-message-signatures-directory"
MEDIA_TYPE = "application/http-message-signatures-directory+json"
MAX_DIRECTORY_BYTES = 64 * 1024
MAX_KEYS = 32
CLOCK_SKEW_SECONDS = 5
# Published test keys (RFC 9421 B.1.4 Ed25519 and B.1.2 RSA-PSS): never trusted from a directory.
TEST_KEY_THUMBPRINTS = frozenset({"poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U", "oD0HwocPBSfpNy5W3bpJeyFGY_IQ_YpqxSjQ3Yd-CLA"})


@dataclass
class Outcome:
    outcome: str  # verified | invalid | unverified | absent
    reason: str
    label: str | None = None
    keyid: str | None = None
    directory: str | None = None  # the key directory URL the signature is attributed to
    advisories: tuple[str, ...] = ()

    def as_dict(self) -> dict:
        body = asdict(self)
        body["advisories"] = list(self.advisories)
        return body


class _Message:
    """The request as http-message-signatures reads it: method, url, headers."""

    def __init__(self, method: str, url: str, headers: dict):
        self.method = method.upper()
        self.url = url
        self.headers = CaseInsensitiveDict(headers)


def _b64url_decode(value: str) -> bytes:
    return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def jwk_thumbprint(jwk: dict) -> str:
    """RFC 7638 JWK SHA-256 thumbprint (RFC 8037 for OKP): the Web Bot Auth keyid."""
    members = {"OKP": ("crv", "kty", "x"), "RSA": ("e", "kty", "n"), "EC": ("crv", "kty", "x", "y")}[jwk["kty"]]
    canonical = json.dumps({name: jwk[name] for name in members}, sort_keys=True, separators=(",", ":"))
    return _b64url(hashlib.sha256(canonical.encode()).digest())


def _key_of(jwk: dict):
    """(public key, algorithm class) of a JWK this verifier accepts; ValueError otherwise."""
    if jwk.get("kty") == "OKP" and jwk.get("crv") == "Ed25519" and isinstance(jwk.get("x"), str):
        raw = _b64url_decode(jwk["x"])
        if len(raw) != 32:
            raise ValueError("an Ed25519 key is 32 bytes")
        return Ed25519PublicKey.from_public_bytes(raw), algorithms.ED25519
    if jwk.get("kty") == "RSA" and isinstance(jwk.get("n"), str) and isinstance(jwk.get("e"), str):
        n = int.from_bytes(_b64url_decode(jwk["n"]), "big")
        e = int.from_bytes(_b64url_decode(jwk["e"]), "big")
        if n.bit_length() < 2048:
            raise ValueError("an RSA key needs at least 2048 bits")
        return rsa.RSAPublicNumbers(e, n).public_key(), algorithms.RSA_PSS_SHA512
    raise ValueError("only Ed25519 and RSA keys are accepted")


def directory_keys_parse(body: bytes, *, allow_test_keys: bool = False) -> tuple[dict[str, dict], list[str]]:
    """{thumbprint: jwk} of the usable keys of a JWKS, and the reasons others were dropped."""
    try:
        document = json.loads(body)
    except ValueError:
        raise ValueError("The key directory is not JSON.") from None
    if not isinstance(document, dict) or not isinstance(document.get("keys"), list):
        raise ValueError("The key directory is not a JWKS (an object with a keys array).")
    keys, dropped = {}, []
    for jwk in document["keys"][:MAX_KEYS]:
        if not isinstance(jwk, dict):
            dropped.append("a key that is not an object")
            continue
        try:
            _key_of(jwk)
            thumbprint = jwk_thumbprint(jwk)
        except (ValueError, KeyError, TypeError) as exc:
            dropped.append(f"an unusable key ({exc})")
            continue
        if "kid" in jwk and jwk["kid"] != thumbprint:
            dropped.append(f"a key whose kid is not its thumbprint {thumbprint}")
            continue
        if thumbprint in TEST_KEY_THUMBPRINTS and not allow_test_keys:
            dropped.append(f"a published test key {thumbprint}")
            continue
        keys[thumbprint] = {name: jwk[name] for name in ("kty", "crv", "x", "n", "e") if name in jwk}
    return keys, dropped


def directory_url(value: str) -> str:
    """The key directory URL for a Signature-Agent value or a registered URL: an origin gets the well-known path.

    Query and fragment are dropped and the scheme and host lower-cased (RFC 3986 6.2.2-6.2.3).
    """
    parts = urlsplit(value.strip())
    if parts.scheme.lower() not in ("https", "http") or not parts.hostname:
        raise ValueError("The key directory must be an https URL.")
    host = parts.hostname.lower()
    port = parts.port
    default_port = {"https": 443, "http": 80}[parts.scheme.lower()]
    netloc = host if port in (None, default_port) else f"{host}:{port}"
    path = parts.path if parts.path not in ("", "/") else DIRECTORY_PATH
    return urlunsplit((parts.scheme.lower(), netloc, path, "", ""))


def directory_fetch(url: str) -> dict:
    """Fetch and validate a key directory now: {keys, dropped, max_age}; ValueError or SafeHttpError on failure."""
    if urlsplit(url).scheme != "https" and not getattr(settings, "ATLAS_WBA_ALLOW_HTTP", False):
        raise ValueError("The key directory must be served over https.")
    response = safe_http.fetch(url, allow_redirects=False, max_bytes=MAX_DIRECTORY_BYTES, timeout=5, deadline=10,
                               headers={"Accept": MEDIA_TYPE})
    if response.status != 200:
        raise ValueError(f"The key directory answered {response.status}, not 200.")
    media = response.headers.get("Content-Type", "").split(";")[0].strip().lower()
    if media not in (MEDIA_TYPE, "application/json", "application/jwk-set+json"):
        raise ValueError(f"The key directory is served as {media or 'nothing'}, not {MEDIA_TYPE}.")
    keys, dropped = directory_keys_parse(response.body)
    if not keys:
        raise ValueError("The key directory holds no usable key" + (f": {dropped[0]}." if dropped else "."))
    max_age = 3600
    for part in response.headers.get("Cache-Control", "").split(","):
        name, _, value = part.strip().partition("=")
        if name.lower() == "max-age" and value.isdigit():
            max_age = int(value)
    return {"keys": keys, "dropped": dropped, "max_age": max(300, min(max_age, 86400))}


def directory_keys(url: str, *, refresh: bool = False) -> tuple[dict[str, dict], str | None]:
    """The keys of a directory: cached while fresh, fetched otherwise; a failed fetch keeps the cached keys.

    Returns ({thumbprint: jwk}, error or None).
    """
    from atlas.models import KeyDirectory

    now = clock.now()
    row = KeyDirectory.objects.filter(url=url).first()
    if row is not None and not refresh and row.fresh_until and row.fresh_until > now:
        return dict(row.keys), None
    try:
        fetched = directory_fetch(url)
    except (ValueError, safe_http.SafeHttpError) as exc:
        message = getattr(exc, "message", None) or str(exc)
        KeyDirectory.objects.update_or_create(url=url, defaults={"last_error": message[:300], "last_attempt_at": now})
        cached = dict(row.keys) if row is not None else {}
        return cached, message
    KeyDirectory.objects.update_or_create(url=url, defaults={
        "keys": fetched["keys"], "fetched_at": now, "fresh_until": now + timedelta(seconds=fetched["max_age"]),
        "last_error": "", "last_attempt_at": now,
    })
    return fetched["keys"], None


def _candidates(signature_input: dict, has_agent_header: bool) -> tuple[list[str], str]:
    chosen, why = [], "no signature is tagged web-bot-auth"
    for label, (components, params) in signature_input.items():
        if params.get("tag") != TAG:
            continue
        if not all(name in params for name in ("keyid", "created", "expires")):
            why = "the web-bot-auth signature lacks keyid, created or expires"
            continue
        names = {name for name, _ in components}
        if not names & {"@authority", "@target-uri"}:
            why = "the web-bot-auth signature covers neither @authority nor @target-uri"
            continue
        if has_agent_header:
            covered = [p for name, p in components if name == "signature-agent"]
            if not covered:
                why = "the web-bot-auth signature does not cover the Signature-Agent header"
                continue
        chosen.append(label)
    return chosen, why


def _agent_url(header: str, label: str, components: list) -> str | None:
    """The Signature-Agent URL for this label: the dictionary member its coverage names, or the legacy string."""
    value = header.strip()
    if value.startswith('"'):
        item, _params = http_sf.parse(value.encode(), tltype="item")
        return item if isinstance(item, str) else None
    members = http_sf.parse(value.encode(), tltype="dictionary")
    keys = [p.get("key") for name, p in components if name == "signature-agent" and p.get("key")]
    member = members.get(keys[0] if keys else label)
    if member is None:
        return None
    item, params = member
    if params.get("type", "directory") not in ("directory", "jwks_uri"):
        return None
    return item if isinstance(item, str) else None


def verify_request(*, method: str, url: str, headers: dict, keys: dict[tuple[str, str], dict] | None = None,
                   allow_test_keys: bool = False) -> Outcome:
    """Verify a request's Web Bot Auth signature. `keys` injects {(directory, keyid): jwk} instead of fetching."""
    headers = CaseInsensitiveDict(headers or {})
    if "signature-input" not in headers and "signature" not in headers:
        return Outcome("absent", "The request carries no HTTP message signature.")
    try:
        signature_input = http_sf.parse(headers.get("signature-input", "").encode(), tltype="dictionary")
        http_sf.parse(headers.get("signature", "").encode(), tltype="dictionary")
    except Exception:  # noqa: BLE001 - http_sf raises ValueError and others on malformed fields
        return Outcome("invalid", "The Signature-Input or Signature header is not a valid structured field.")
    agent_header = headers.get("signature-agent")
    labels, why = _candidates(signature_input, agent_header is not None)
    if not labels:
        return Outcome("absent", f"No Web Bot Auth signature: {why}.")
    label = labels[0]
    components, params = signature_input[label]
    keyid = params["keyid"]
    now = time.time()
    advisories = []
    if not isinstance(params["created"], int) or not isinstance(params["expires"], int):
        return Outcome("invalid", "created and expires must be integers.", label, keyid)
    if params["created"] > now + CLOCK_SKEW_SECONDS:
        return Outcome("invalid", "The signature was created in the future.", label, keyid)
    if params["expires"] < now - CLOCK_SKEW_SECONDS:
        return Outcome("invalid", "The signature has expired.", label, keyid)
    if params["expires"] - params["created"] > 86400:
        advisories.append("The signature lives longer than the 24 hours the draft recommends.")
    if agent_header is None:
        return Outcome("unverified", f"No Signature-Agent: the signature names key {keyid} only, with no directory to "
                       "attribute it to.", label, keyid, None, tuple(advisories))
    try:
        agent_url = _agent_url(agent_header, label, components)
    except Exception:  # noqa: BLE001
        return Outcome("invalid", "The Signature-Agent header is not a valid structured field.", label, keyid)
    if not agent_url:
        return Outcome("invalid", f"The Signature-Agent header has no usable member for {label}.", label, keyid)
    try:
        directory = directory_url(agent_url)
    except ValueError as exc:
        return Outcome("invalid", str(exc), label, keyid)
    if urlsplit(agent_url).scheme != "https":
        return Outcome("invalid", "The Signature-Agent must be an https URL.", label, keyid, directory)
    if keys is not None:
        jwk = keys.get((directory, keyid))
        error = None
    else:
        directory_set, error = directory_keys(directory)
        jwk = directory_set.get(keyid)
    if keyid in TEST_KEY_THUMBPRINTS and not allow_test_keys:
        return Outcome("invalid", f"Key {keyid} is a published test key, which is never trusted.", label, keyid, directory)
    if jwk is None:
        reason = f"The key directory {directory} could not be fetched: {error}" if error else (
            f"Key {keyid} is not in the key directory {directory}.")
        return Outcome("unverified", reason, label, keyid, directory, tuple(advisories))
    try:
        public_key, algorithm = _key_of(jwk)
        verifier = HTTPMessageVerifier(signature_algorithm=algorithm,
                                       key_resolver=MappingKeyResolver(public_keys={keyid: public_key}, private_keys={}))
        verifier.verify(_Message(method, url, dict(headers)), max_age=None, expect_tag=TAG, expect_label=label)
    except (InvalidSignature, HTTPMessageSignaturesException, ValueError) as exc:
        detail = str(exc).rstrip(".")
        reason = "The signature does not verify" + (f": {detail}." if detail else ".")
        return Outcome("invalid", reason, label, keyid, directory)
    return Outcome("verified", f"Signed by key {keyid} of {directory}.", label, keyid, directory, tuple(advisories))
