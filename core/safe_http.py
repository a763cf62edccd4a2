"""The only way the service fetches a URL: refuses anything that is not a public HTTP(S) address.

Beacon scans, webhook deliveries, HTTP domain proofs and Web Bot Auth key directories all come
through `fetch`. Every hop of every request is checked twice:

- before sending, `validate_url` checks the URL's form: scheme http or https, no credentials, a
  host that is a public IP literal or a fully qualified name (not `localhost`, not a metadata or
  internal name, not a number written in a non-standard IPv4 form), and an allowed port;
- when connecting, the host is resolved once, every resolved address must be public (not loopback,
  private, link-local, metadata, multicast, reserved, shared, documentation, or an IPv6 form that
  embeds one of those), and the socket connects to one of those validated addresses. Nothing
  resolves the name a second time, so a DNS answer that changes between check and use (rebinding)
  cannot steer the connection. TLS still sends SNI for, and checks the certificate against, the
  original host name.

Redirects are followed by hand, each hop checked the same way. Time (per connect and read, and a
total deadline for the whole fetch, redirects and body included) and size (decoded body bytes) are
capped, proxies and `.netrc` from the environment are ignored, and our User-Agent is always sent.

Ports: 80, 443 and 1024-65535. Ports 1-1023 other than 80 and 443 are system services (SSH, SMTP,
...) that a web fetch has no business reaching, and port 0 is not a port.

Tests reach local servers through `allow_loopback()` or the SAFE_HTTP_ALLOW_LOOPBACK setting, which
let loopback addresses (127.0.0.0/8 and ::1) through, never private, link-local or metadata space.
"""

import contextlib
import contextvars
import ipaddress
import json as jsonlib
import logging
import re
import socket
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin

import requests
import urllib3
from django.conf import settings
from requests.adapters import HTTPAdapter
from requests.structures import CaseInsensitiveDict
from requests.utils import get_encoding_from_headers, requote_uri
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import ConnectTimeoutError, LocationParseError, NewConnectionError
from urllib3.util import parse_url
from urllib3.util.connection import allowed_gai_family

log = logging.getLogger(__name__)

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

ALLOWED_SCHEMES = ("http", "https")
ALLOWED_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
MAX_URL_LENGTH = 4096
REDIRECT_STATUSES = (301, 302, 303, 307, 308)
_CHUNK_BYTES = 16 * 1024

# A CA bundle to trust instead of the default one (certifi). Only tests set it, to trust a local
# test CA; certificates are always verified, against the original host name.
TLS_CA_BUNDLE: str | None = None


class SafeHttpError(Exception):
    """A fetch that was refused or failed; `message` is one sentence fit to show the caller."""

    def __init__(self, message: str):
        self.message = message
        super().__init__(message)


class UnsafeURL(SafeHttpError):
    """The URL, a redirect target, or an address its host resolves to, is not allowed."""


class FetchError(SafeHttpError):
    """The fetch was allowed but failed: connection, TLS, timeout, size or redirect limits."""


class FetchTimeout(FetchError):
    """A connect or read timed out, or the whole fetch went past its deadline."""


class ResponseTooLarge(FetchError):
    """The response body is larger than the byte cap."""


class TooManyRedirects(FetchError):
    """The response kept redirecting past the redirect cap."""


@dataclass(frozen=True)
class SafeResponse:
    """A fetched response, fully read: `url` is the final URL, `history` the URLs that redirected to it."""

    status: int
    headers: Mapping[str, str]
    url: str
    body: bytes
    elapsed: float  # seconds, the whole fetch
    history: tuple[str, ...] = ()
    truncated: bool = False  # only with truncate=True: the body was cut at the byte cap

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    @property
    def text(self) -> str:
        """The body decoded with the Content-Type charset (UTF-8 when none), bad bytes replaced."""
        encoding = get_encoding_from_headers(self.headers) or "utf-8"
        if encoding.lower() == "iso-8859-1" and "charset" not in self.headers.get("Content-Type", "").lower():
            encoding = "utf-8"  # requests' text/* default of Latin-1 is wrong for nearly every site
        try:
            return self.body.decode(encoding, errors="replace")
        except LookupError:
            return self.body.decode("utf-8", errors="replace")

    def json(self) -> Any:
        """The body parsed as JSON; raises ValueError (json.JSONDecodeError) when it is not JSON."""
        return jsonlib.loads(self.body)


# Addresses -------------------------------------------------------------------------------------

_REFUSED_NETWORKS: tuple[tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, str], ...] = tuple(
    (ipaddress.ip_network(network), phrase)
    for network, phrase in (
        ("0.0.0.0/8", "an unspecified ('this network') address"),
        ("127.0.0.0/8", "a loopback address"),
        ("169.254.169.254/32", "the cloud metadata address"),
        ("169.254.0.0/16", "a link-local address"),
        ("10.0.0.0/8", "a private address"),
        ("172.16.0.0/12", "a private address"),
        ("192.168.0.0/16", "a private address"),
        ("100.64.0.0/10", "a shared (carrier-grade NAT) address"),
        ("192.0.0.0/24", "an IETF protocol assignment address"),
        ("192.0.2.0/24", "a documentation address"),
        ("198.51.100.0/24", "a documentation address"),
        ("203.0.113.0/24", "a documentation address"),
        ("198.18.0.0/15", "a benchmarking address"),
        ("192.88.99.0/24", "a 6to4 relay anycast address"),
        ("224.0.0.0/4", "a multicast address"),
        ("255.255.255.255/32", "the broadcast address"),
        ("240.0.0.0/4", "a reserved address"),
        ("::/128", "an unspecified address"),
        ("::1/128", "a loopback address"),
        ("fd00:ec2::254/128", "the cloud metadata address"),
        ("fc00::/7", "a private (unique local) address"),
        ("fe80::/10", "a link-local address"),
        ("fec0::/10", "a site-local address"),
        ("ff00::/8", "a multicast address"),
        ("64:ff9b:1::/48", "a local-use NAT64 address"),
        ("100::/64", "a discard-only address"),
        ("2001::/32", "a Teredo address"),
        ("2001:db8::/32", "a documentation address"),
        ("3fff::/20", "a documentation address"),
    )
)
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_IPV4_TRANSLATED = ipaddress.ip_network("::ffff:0:0:0/96")


def _embedded_ipv4(address: ipaddress.IPv6Address) -> tuple[ipaddress.IPv4Address, str] | None:
    """The IPv4 address an IPv6 form carries (mapped, translated, compatible, NAT64, 6to4), and the form's name."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped, "IPv4-mapped"
    low32 = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address in _IPV4_TRANSLATED:
        return low32, "IPv4-translated"
    if int(address) >> 32 == 0 and int(address) > 1:
        return low32, "IPv4-compatible"
    if address in _NAT64:
        return low32, "NAT64"
    if address.sixtofour is not None:
        return address.sixtofour, "6to4"
    return None


def _refusal(address: IPAddress) -> str | None:
    """Why an address is refused, as a noun phrase ("a private address"), or None when it is public."""
    if isinstance(address, ipaddress.IPv6Address):
        address = ipaddress.IPv6Address(int(address))  # drop any %scope
        embedded = _embedded_ipv4(address)
        if embedded is not None:
            ipv4, form = embedded
            if form in ("IPv4-compatible", "IPv4-translated"):
                return f"an {form} IPv6 address (deprecated)"
            inner = _refusal(ipv4)
            if inner is not None:
                return f"the {form} IPv6 form of {ipv4}, {inner}"
            if form != "6to4":
                return None  # mapped or NAT64 form of a public IPv4 address: that address is what is reached
    for network, phrase in _REFUSED_NETWORKS:
        if address.version == network.version and address in network:
            return phrase
    checks = (
        (address.is_unspecified, "an unspecified address"),
        (address.is_loopback, "a loopback address"),
        (address.is_link_local, "a link-local address"),
        (address.is_multicast, "a multicast address"),
        (address.is_private, "a private address"),
        (address.is_reserved, "a reserved address"),
        (isinstance(address, ipaddress.IPv6Address) and address.is_site_local, "a site-local address"),
        (not address.is_global, "not a public address"),
    )
    for refused, phrase in checks:
        if refused:
            return phrase
    return None


def is_public_address(ip: str | IPAddress) -> bool:
    """Whether `ip` is an address safe_http may connect to (loopback never is); False for a non-address."""
    try:
        address = ipaddress.ip_address(ip)
    except ValueError:
        return False
    return _refusal(address) is None


_loopback_allowance = 0
_loopback_lock = threading.Lock()


@contextlib.contextmanager
def allow_loopback() -> Iterator[None]:
    """Test-only: within the block, loopback addresses (127.0.0.0/8, ::1, `localhost`) may be fetched.

    It is process-wide (a test's local server answers fetches made from other threads too) and lets
    nothing else through: private, link-local and metadata addresses stay refused.
    """
    global _loopback_allowance
    with _loopback_lock:
        _loopback_allowance += 1
    try:
        yield
    finally:
        with _loopback_lock:
            _loopback_allowance -= 1


def _loopback_allowed() -> bool:
    return _loopback_allowance > 0 or bool(getattr(settings, "SAFE_HTTP_ALLOW_LOOPBACK", False))


def _is_plain_loopback(address: IPAddress) -> bool:
    if isinstance(address, ipaddress.IPv4Address):
        return address in ipaddress.IPv4Network("127.0.0.0/8")
    return int(address) == 1  # ::1, not an IPv4-mapped or other embedded form


def _check_address(address: IPAddress, host: str, *, literal: bool) -> None:
    reason = _refusal(address)
    if reason is None or (_is_plain_loopback(address) and _loopback_allowed()):
        return
    if literal:
        raise UnsafeURL(f"The address {host} is {reason}, which is refused.")
    shown = ipaddress.ip_address(int(address)) if address.version == 6 else address  # without any %scope
    raise UnsafeURL(f"The host {host} resolves to {shown}, {reason}, which is refused.")


# Host names ------------------------------------------------------------------------------------

_METADATA_NAMES = frozenset(
    {
        "metadata",
        "metadata.google.internal",
        "metadata.goog",
        "metadata.azure.com",
        "instance-data",
        "instance-data.ec2.internal",
        "metadata.tencentyun.com",
        "metadata.platformequinix.com",
    }
)
# Special-use and private-use domains: never public, whatever they resolve to.
_REFUSED_SUFFIXES = (".localhost", ".local", ".localdomain", ".internal", ".intranet", ".lan", ".home.arpa", ".corp")
_LABEL = re.compile(r"^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$")
_NUMERIC_LABEL = re.compile(r"^(?:[0-9]+|0x[0-9a-f]*)$")


def _check_host(host: str) -> IPAddress | None:
    """Refuse a host by its form alone (no DNS); return its address when it is an IP literal."""
    host = host.strip("[]")
    if not host:
        raise UnsafeURL("The URL has no host.")
    if "%" in host:
        raise UnsafeURL(f"The host {host} carries a zone or percent sign, which is refused.")
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        address = None
    if address is not None:
        _check_address(address, host, literal=True)
        return address
    name = host.lower()
    name = name[:-1] if name.endswith(".") else name
    labels = name.split(".")
    if _NUMERIC_LABEL.match(labels[-1]):
        # 0177.0.0.1, 0x7f.1, 127.1, 2130706433: resolvers read these as IPv4 addresses.
        raise UnsafeURL(f"The host {host} is an IPv4 address in a non-standard form, which is refused.")
    if len(name) > 253 or not all(_LABEL.match(label) for label in labels):
        raise UnsafeURL(f"The host {host} is not a valid host name.")
    is_loopback_name = name == "localhost" or name.endswith(".localhost")
    if is_loopback_name and _loopback_allowed():
        return None
    if is_loopback_name:
        raise UnsafeURL(f"The host {host} is a loopback name, which is refused.")
    if name in _METADATA_NAMES:
        raise UnsafeURL(f"The host {host} is a cloud metadata name, which is refused.")
    for suffix in _REFUSED_SUFFIXES:
        if name.endswith(suffix):
            raise UnsafeURL(f"The host {host} is in the non-public {suffix} domain, which is refused.")
    if len(labels) < 2:
        raise UnsafeURL(f"The host {host} is not a fully qualified public name.")
    return None


def _check_port(port: int | None) -> None:
    if port is None or port in (80, 443) or 1024 <= port <= 65535:
        return
    raise UnsafeURL(f"The port {port} is not allowed; use 80, 443 or a port from 1024 to 65535.")


def validate_url(url: str) -> None:
    """Check a URL's form without fetching or resolving it; raise UnsafeURL saying what is wrong.

    Checks the scheme (http, https), credentials (none allowed), the host (IP literals must be
    public; names must be fully qualified and not loopback, metadata or internal names) and the
    port. A name that resolves to a refused address passes here and is refused by `fetch`.
    """
    if not isinstance(url, str) or not url:
        raise UnsafeURL("The URL is empty.")
    if len(url) > MAX_URL_LENGTH:
        raise UnsafeURL(f"The URL is longer than {MAX_URL_LENGTH} characters.")
    if any(ord(char) <= 0x20 or ord(char) == 0x7F for char in url) or "\\" in url:
        raise UnsafeURL("The URL contains whitespace, control characters or backslashes.")
    try:
        parsed = parse_url(url)
    except LocationParseError:
        raise UnsafeURL("The URL cannot be parsed.") from None
    scheme = (parsed.scheme or "").lower()
    if not scheme:
        raise UnsafeURL("The URL has no scheme; use http or https.")
    if scheme not in ALLOWED_SCHEMES:
        raise UnsafeURL(f"The URL scheme {scheme} is not allowed; use http or https.")
    if parsed.auth is not None or "@" in (parsed.netloc or ""):
        raise UnsafeURL("The URL contains credentials (user:password@), which are not allowed.")
    _check_host(parsed.host or "")
    _check_port(parsed.port)


def _host_of(url: str) -> str:
    try:
        return parse_url(url).host or "?"
    except LocationParseError:
        return "?"


def _loggable(url: str) -> str:
    """Scheme, host, port and path: never the query, fragment or credentials, which may hold secrets."""
    try:
        parsed = parse_url(url)
    except LocationParseError:
        return "<unparsable URL>"
    port = f":{parsed.port}" if parsed.port else ""
    return f"{parsed.scheme}://{parsed.host}{port}{parsed.path or '/'}"


# The deadline ----------------------------------------------------------------------------------


class _Deadline:
    """The whole fetch's deadline: when it passes, every socket of the fetch is shut down.

    A per-read timeout alone lets a server that drips one byte at a time hold a fetch for ever;
    shutting the sockets down wakes any read blocked in the fetching thread at the deadline.
    """

    def __init__(self, seconds: float):
        self.at = time.monotonic() + seconds
        self.expired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def remaining(self) -> float:
        return self.at - time.monotonic()

    def track(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
            expired = self.expired
        if expired:
            self._shutdown(sock)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            sockets = list(self._sockets)
        for sock in sockets:
            self._shutdown(sock)

    @staticmethod
    def _shutdown(sock: socket.socket) -> None:
        # A closed socket object has given up its descriptor, so this never touches a reused one.
        # The plain socket's shutdown, also for a TLS socket, leaves its TLS state to the reading thread.
        with contextlib.suppress(OSError):
            socket.socket.shutdown(sock, socket.SHUT_RDWR)

    def __enter__(self) -> "_Deadline":
        self._timer.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._timer.cancel()


_current_deadline: contextvars.ContextVar[_Deadline | None] = contextvars.ContextVar("safe_http_deadline", default=None)


# The transport: connect only to a validated address --------------------------------------------


def _resolve(host: str, port: int) -> list[tuple]:
    """Check the host's form, resolve it once, and refuse unless every address is allowed."""
    literal = _check_host(host)
    flags = socket.AI_NUMERICHOST if literal is not None else 0
    try:
        infos = socket.getaddrinfo(host.strip("[]"), port, allowed_gai_family(), socket.SOCK_STREAM, 0, flags)
    except (OSError, UnicodeError):
        raise FetchError(f"The host name {host} could not be resolved.") from None
    if not infos:
        raise FetchError(f"The host name {host} could not be resolved.")
    for info in infos:
        _check_address(ipaddress.ip_address(info[4][0]), host, literal=literal is not None)
    return infos


class _PinnedConnectionMixin:
    """Replaces urllib3's `_new_conn`: the socket connects to an address `_resolve` validated."""

    def _new_conn(self) -> socket.socket:
        host = self._dns_host.strip("[]")
        error: OSError | None = None
        for family, socktype, proto, _canonname, sockaddr in _resolve(host, self.port):
            sock = None
            try:
                sock = socket.socket(family, socktype, proto)
                deadline = _current_deadline.get()
                if deadline is not None:
                    deadline.track(sock)
                for option in self.socket_options or ():
                    sock.setsockopt(*option)
                if isinstance(self.timeout, (int, float)):
                    sock.settimeout(self.timeout)
                if self.source_address:
                    sock.bind(self.source_address)
                sock.connect(sockaddr)
            except OSError as exc:
                error = exc
                if sock is not None:
                    sock.close()
                continue
            sys.audit("http.client.connect", self, self.host, self.port)
            return sock
        if isinstance(error, TimeoutError):
            raise ConnectTimeoutError(self, f"Connection to {self.host} timed out. (connect timeout={self.timeout})")
        raise NewConnectionError(self, f"Failed to establish a new connection: {error}")

    def connect(self) -> None:
        super().connect()
        deadline = _current_deadline.get()
        if deadline is not None and self.sock is not None:
            deadline.track(self.sock)  # for HTTPS, the TLS socket that now wraps the one _new_conn made


class _PinnedHTTPConnection(_PinnedConnectionMixin, HTTPConnection):
    pass


class _PinnedHTTPSConnection(_PinnedConnectionMixin, HTTPSConnection):
    pass


class _PinnedHTTPConnectionPool(HTTPConnectionPool):
    ConnectionCls = _PinnedHTTPConnection


class _PinnedHTTPSConnectionPool(HTTPSConnectionPool):
    ConnectionCls = _PinnedHTTPSConnection


class _PinnedAdapter(HTTPAdapter):
    def init_poolmanager(self, *args, **kwargs) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": _PinnedHTTPConnectionPool, "https": _PinnedHTTPSConnectionPool}

    def proxy_manager_for(self, proxy, **proxy_kwargs):
        # A proxy would resolve and connect on our behalf, past every check here.
        raise RuntimeError("safe_http never sends through a proxy.")


def _session() -> requests.Session:
    session = requests.Session()
    session.trust_env = False  # no proxies, CA bundle or .netrc credentials from the environment
    session.adapters.clear()
    adapter = _PinnedAdapter(max_retries=0)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


# Fetch -----------------------------------------------------------------------------------------


def _send(session: requests.Session, prepared: requests.PreparedRequest, *, timeout: float, deadline: _Deadline):
    host = _host_of(prepared.url or "")
    remaining = deadline.remaining()
    if remaining <= 0 or deadline.expired:
        raise FetchTimeout(f"The fetch from {host} took longer than its deadline.")
    wait = min(timeout, remaining)
    verify: str | bool = TLS_CA_BUNDLE or True
    try:
        return session.send(prepared, stream=True, allow_redirects=False, timeout=(wait, wait), verify=verify, proxies={})
    except requests.exceptions.InvalidSchema:
        raise UnsafeURL("The URL scheme is not allowed; use http or https.") from None
    except (requests.exceptions.RequestException, urllib3.exceptions.HTTPError, OSError) as exc:
        # Exception texts name the URL with its query, which may hold a token: log the type only.
        log.info("safe_http failure with %s: %s", host, type(exc).__name__)
        if deadline.expired:
            raise FetchTimeout(f"The fetch from {host} took longer than its deadline.") from None
        if isinstance(exc, (requests.exceptions.Timeout, urllib3.exceptions.TimeoutError, TimeoutError)):
            raise FetchTimeout(f"{host} did not answer within {wait:g} seconds.") from None
        if isinstance(exc, requests.exceptions.SSLError):
            raise FetchError(f"The TLS connection to {host} failed (certificate or handshake).") from None
        raise FetchError(f"The connection to {host} failed.") from None


def _read_body(response: requests.Response, *, host: str, max_bytes: int, truncate: bool, deadline: _Deadline):
    too_large = f"The response from {host} is larger than {max_bytes} bytes."
    declared = response.headers.get("Content-Length", "")
    has_body = response.request.method != "HEAD" and response.status_code not in (204, 304)
    if (
        has_body
        and not truncate
        and not response.headers.get("Content-Encoding")
        and declared.isdigit()
        and int(declared) > max_bytes
    ):
        raise ResponseTooLarge(too_large)
    chunks: list[bytes] = []
    size = 0
    truncated = False
    try:
        for chunk in response.raw.stream(_CHUNK_BYTES, decode_content=True):
            if size + len(chunk) > max_bytes:
                if not truncate:
                    raise ResponseTooLarge(too_large)
                chunks.append(chunk[: max_bytes - size])
                truncated = True
                break
            chunks.append(chunk)
            size += len(chunk)
            if deadline.expired:
                break
    except (urllib3.exceptions.HTTPError, requests.exceptions.RequestException, OSError) as exc:
        if deadline.expired:
            raise FetchTimeout(f"The fetch from {host} took longer than its deadline.") from None
        if isinstance(exc, (urllib3.exceptions.TimeoutError, TimeoutError)):
            raise FetchTimeout(f"{host} stopped sending the response body.") from None
        raise FetchError(f"The response body from {host} could not be read.") from None
    finally:
        response.close()
    if deadline.expired:
        raise FetchTimeout(f"The fetch from {host} took longer than its deadline.")
    return b"".join(chunks), truncated


def _sentence_tail(message: str) -> str:
    """A sentence made to follow a colon: "The address ..." becomes "the address ..."."""
    return message[:1].lower() + message[1:]


def _redirected_method(method: str, status: int) -> str:
    """The method of the next hop, as browsers and requests do: 303 (and 302, 301 after POST) become GET."""
    if status == 303 and method != "HEAD":
        return "GET"
    if status == 302 and method != "HEAD":
        return "GET"
    if status == 301 and method == "POST":
        return "GET"
    return method


@dataclass
class _Hop:
    method: str
    url: str
    headers: dict[str, str]
    body: bytes | str | None = None
    json: Any = None
    history: list[str] = field(default_factory=list)


def fetch(
    url: str,
    *,
    method: str = "GET",
    headers: Mapping[str, str] | None = None,
    body: bytes | str | None = None,
    json: Any = None,
    timeout: float | None = None,
    deadline: float | None = None,
    max_bytes: int | None = None,
    truncate: bool = False,
    allow_redirects: bool = True,
    max_redirects: int | None = None,
    user_agent: str | None = None,
) -> SafeResponse:
    """Fetch a public http(s) URL, refusing anything else; the response is read in full and returned.

    `timeout` caps each connect and each read (default SAFE_HTTP_TIMEOUT_SECONDS); `deadline` caps
    the whole fetch, redirects and body included (default SAFE_HTTP_DEADLINE_SECONDS). A body past
    `max_bytes` (default SAFE_HTTP_MAX_BYTES, counted after decompression) raises ResponseTooLarge,
    or with `truncate=True` is cut there and marked `truncated`. Redirects (at most `max_redirects`,
    default SAFE_HTTP_MAX_REDIRECTS) are followed with every hop checked; a cross-host hop drops
    Authorization and Cookie headers. Statuses are returned, not raised. Raises UnsafeURL when the
    URL, a redirect or a resolved address is refused, FetchError (or a subclass) when the fetch fails.
    """
    method = method.upper()
    if method not in ALLOWED_METHODS:
        raise ValueError(f"method must be one of {', '.join(ALLOWED_METHODS)}, not {method!r}.")
    if body is not None and json is not None:
        raise ValueError("Pass body or json, not both.")
    timeout = float(timeout if timeout is not None else settings.SAFE_HTTP_TIMEOUT_SECONDS)
    total = float(deadline if deadline is not None else settings.SAFE_HTTP_DEADLINE_SECONDS)
    max_bytes = int(max_bytes if max_bytes is not None else settings.SAFE_HTTP_MAX_BYTES)
    max_redirects = int(max_redirects if max_redirects is not None else settings.SAFE_HTTP_MAX_REDIRECTS)
    sent_headers = dict(headers or {})
    for name in [name for name in sent_headers if name.lower() == "user-agent"]:
        given = sent_headers.pop(name)
        user_agent = user_agent or given
    sent_headers["User-Agent"] = user_agent or settings.SAFE_HTTP_USER_AGENT

    try:
        validate_url(url)
    except UnsafeURL as exc:
        log.info("safe_http refused %s: %s", _loggable(url), exc.message)
        raise

    started = time.monotonic()
    hop = _Hop(method=method, url=url, headers=sent_headers, body=body, json=json)
    with _Deadline(total) as limit, _session() as session:
        token = _current_deadline.set(limit)
        try:
            response = _follow(
                session, hop, timeout=timeout, limit=limit, allow_redirects=allow_redirects, max_redirects=max_redirects
            )
            content, truncated = _read_body(
                response, host=_host_of(response.url), max_bytes=max_bytes, truncate=truncate, deadline=limit
            )
        finally:
            _current_deadline.reset(token)
    elapsed = time.monotonic() - started
    log.info(
        "safe_http %s %s -> %s (%d bytes%s, %d redirects, %.3fs)",
        method,
        _loggable(response.url),
        response.status_code,
        len(content),
        ", truncated" if truncated else "",
        len(hop.history),
        elapsed,
    )
    return SafeResponse(
        status=response.status_code,
        headers=CaseInsensitiveDict(response.headers),
        url=response.url,
        body=content,
        elapsed=elapsed,
        history=tuple(hop.history),
        truncated=truncated,
    )


def _follow(session: requests.Session, hop: _Hop, *, timeout: float, limit: _Deadline, allow_redirects: bool, max_redirects: int):
    """Send the hop, then each redirect it leads to, checking every target; return the last response."""
    while True:
        request = requests.Request(hop.method, hop.url, headers=hop.headers, data=hop.body, json=hop.json)
        prepared = session.prepare_request(request)
        try:
            response = _send(session, prepared, timeout=timeout, deadline=limit)
        except UnsafeURL as exc:
            log.info("safe_http refused %s: %s", _loggable(hop.url), exc.message)
            if hop.history:
                raise UnsafeURL(f"A redirect to {_host_of(hop.url)} was refused: {_sentence_tail(exc.message)}") from None
            raise
        target = session.get_redirect_target(response) if allow_redirects else None
        if target is None or response.status_code not in REDIRECT_STATUSES:
            return response
        response.close()  # an intermediate body is never read: it could be any size
        if len(hop.history) >= max_redirects:
            raise TooManyRedirects(f"The URL redirected more than {max_redirects} times.")
        next_url = requote_uri(urljoin(prepared.url or hop.url, target))
        try:
            validate_url(next_url)
        except UnsafeURL as exc:
            log.info("safe_http refused a redirect from %s to %s: %s", _loggable(hop.url), _loggable(next_url), exc.message)
            raise UnsafeURL(f"A redirect from {_host_of(hop.url)} was refused: {_sentence_tail(exc.message)}") from None
        if session.should_strip_auth(prepared.url or hop.url, next_url):
            hop.headers = {
                k: v for k, v in hop.headers.items() if k.lower() not in ("authorization", "cookie", "proxy-authorization")
            }
        next_method = _redirected_method(hop.method, response.status_code)
        if next_method != hop.method or response.status_code not in (307, 308):
            hop.body = hop.json = None
            hop.headers = {k: v for k, v in hop.headers.items() if k.lower() not in ("content-type", "content-length")}
        hop.history.append(prepared.url or hop.url)
        hop.method = next_method
        hop.url = next_url
