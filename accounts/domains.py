"""Domain proof, shared by organizations, account recovery and Atlas registrations.

The caller publishes a value we issue, either as a DNS TXT record at `_svc-atlas.<domain>` (read
with dnspython) or as the file `/.well-known/svc-atlas.txt` on the domain (fetched with
core.safe_http). Either one proves control of the domain.
"""

import re
import secrets
from datetime import timedelta

import dns.exception
import dns.resolver
import idna
from django.conf import settings

from core import safe_http
from core.errors import BadRequest

DNS_LABEL = "_svc-atlas"
WELL_KNOWN_PATH = "/.well-known/svc-atlas.txt"
VALUE_PREFIX = "svc-atlas-verification="
ORG_PROOF_TTL = timedelta(days=7)
RECOVERY_PROOF_TTL = timedelta(hours=24)

_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")
# Names that never denote a public host (RFC 6761, RFC 6762, RFC 7686, home.arpa and common internal suffixes).
_NOT_PUBLIC_SUFFIXES = ("localhost", "local", "internal", "intranet", "lan", "home", "corp", "test", "example",
                        "invalid", "onion", "arpa", "localdomain")


def domain_normalize(raw: str, *, field: str = "domain") -> str:
    """A public hostname in lower-case ASCII (IDNA), or 400 naming the field."""
    if not isinstance(raw, str) or not raw.strip():
        raise BadRequest(f"{field} must be a public hostname such as example.com.")
    name = raw.strip().rstrip(".").lower()
    if "://" in name or "/" in name or ":" in name or "@" in name or " " in name:
        raise BadRequest(f"{field} must be a bare hostname such as example.com, without scheme, port or path.")
    try:
        name = idna.encode(name, uts46=True).decode("ascii")
    except (idna.IDNAError, UnicodeError):
        raise BadRequest(f"{field} is not a valid hostname.") from None
    labels = name.split(".")
    if len(name) > 253 or len(labels) < 2 or not all(_LABEL.match(label) for label in labels):
        raise BadRequest(f"{field} must be a public hostname such as example.com.")
    tld = labels[-1]
    if tld.isdigit() or not (tld.isalpha() or tld.startswith("xn--")):
        raise BadRequest(f"{field} must be a public hostname, not an address.")
    if tld in _NOT_PUBLIC_SUFFIXES:
        raise BadRequest(f"{field} must be a public hostname; .{tld} names are not public.")
    return name


def proof_value_new() -> str:
    return VALUE_PREFIX + secrets.token_urlsafe(24)


def proof_instructions(domain: str, value: str) -> dict:
    """What to publish, and where: either place proves control."""
    return {
        "domain": domain,
        "value": value,
        "dns": {"type": "TXT", "name": f"{DNS_LABEL}.{domain}", "value": value},
        "http": {"url": f"https://{domain}{WELL_KNOWN_PATH}", "body": value},
    }


def resolver() -> dns.resolver.Resolver:
    """A DNS resolver with the service's configured servers and time cap (DOMAIN_PROOF_NAMESERVERS)."""
    servers = settings.DOMAIN_PROOF_NAMESERVERS
    resolver = dns.resolver.Resolver(configure=not servers)
    if servers:
        resolver.nameservers = []
        for server in servers:
            host, _, port = server.rpartition(":") if server.count(":") == 1 else (server, "", "")
            resolver.nameservers.append(host or server)
            if port:
                resolver.port = int(port)
    resolver.lifetime = settings.DOMAIN_PROOF_DNS_TIMEOUT_SECONDS
    return resolver


def _dns_values(domain: str) -> list[str]:
    try:
        answer = resolver().resolve(f"{DNS_LABEL}.{domain}", "TXT")
    except (dns.exception.DNSException, OSError):
        return []
    return [b"".join(record.strings).decode("utf-8", "replace").strip() for record in answer]


def _http_values(domain: str) -> list[str]:
    for template in settings.DOMAIN_PROOF_URLS:
        url = template.format(domain=domain, path=WELL_KNOWN_PATH)
        try:
            response = safe_http.fetch(url, max_bytes=4096, truncate=True, timeout=5)
        except safe_http.SafeHttpError:
            continue
        if response.ok:
            return [line.strip() for line in response.text.splitlines() if line.strip()]
    return []


def proof_found(domain: str, values: list[str]) -> tuple[str, str] | None:
    """(method, value) when one of `values` is published at the domain by DNS or HTTP, else None."""
    wanted = set(values)
    if not wanted:
        return None
    for found in _dns_values(domain):
        if found in wanted:
            return "dns", found
    for found in _http_values(domain):
        if found in wanted:
            return "http", found
    return None
