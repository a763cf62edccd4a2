"""core.safe_http: the SSRF suite, and real fetches from local servers through the loopback allowance.

The network guard (tests/netguard.py) fails any test whose code tries to resolve an unregistered
name or reach an address outside loopback, so every refusal below is also proof that nothing was
sent: the refusal happened before any connect.
"""

import datetime
import gzip
import http.server
import json
import socket
import ssl
import threading
import time
from urllib.parse import parse_qs, quote, urlsplit

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from core import safe_http
from core.safe_http import (
    FetchError,
    FetchTimeout,
    ResponseTooLarge,
    SafeHttpError,
    TooManyRedirects,
    UnsafeURL,
    fetch,
    is_public_address,
    validate_url,
)


@pytest.fixture(autouse=True)
def _loopback_refused_by_default(settings):
    """Whatever the environment says, each test starts without the loopback allowance."""
    settings.SAFE_HTTP_ALLOW_LOOPBACK = False


@pytest.fixture
def loopback():
    with safe_http.allow_loopback():
        yield


# A local HTTP server ---------------------------------------------------------------------------


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def log_message(self, format, *args):
        pass

    def _send(self, status: int, body: bytes = b"", headers: dict | None = None, *, length: bool = True):
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if length:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _route(self):
        size = int(self.headers.get("Content-Length") or 0)
        received = self.rfile.read(size) if size else b""
        url = urlsplit(self.path)
        query = {key: values[0] for key, values in parse_qs(url.query).items()}
        self.server.seen.append({"method": self.command, "path": self.path, "headers": dict(self.headers.items())})
        parts = url.path.strip("/").split("/")
        try:
            if url.path == "/hello":
                self._send(200, b"hello", {"Content-Type": "text/plain; charset=utf-8"})
            elif url.path == "/echo":
                echo = {"method": self.command, "headers": dict(self.headers.items()), "body": received.decode()}
                self._send(200, json.dumps(echo).encode(), {"Content-Type": "application/json"})
            elif parts[0] == "redirect":
                left = int(parts[1])
                self._send(302, headers={"Location": f"/redirect/{left - 1}" if left > 1 else "/hello"})
            elif url.path == "/to":
                self._send(int(query.get("status", 302)), headers={"Location": query["url"]})
            elif parts[0] == "bytes":
                self._send(200, b"x" * int(parts[1]))
            elif parts[0] == "unsized":  # no Content-Length: the body ends when the connection closes
                self._send(200, b"x" * int(parts[1]), length=False)
            elif parts[0] == "gzip":
                self._send(200, gzip.compress(b"\0" * int(parts[1])), {"Content-Encoding": "gzip"})
            elif url.path == "/stall":
                time.sleep(1.5)
                self._send(200, b"late")
            elif url.path == "/drip":  # one byte every 0.1 s for 3 s: no single read ever times out
                self._send(200, length=False)
                for _ in range(30):
                    self.wfile.write(b"x")
                    self.wfile.flush()
                    time.sleep(0.1)
            else:
                self._send(404, b"no such path")
        except OSError:
            pass  # the client gave up first, as the timeout tests intend

    do_GET = do_POST = do_HEAD = do_PUT = _route


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, ssl_context: ssl.SSLContext | None = None):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.seen: list[dict] = []
        if ssl_context is not None:
            self.socket = ssl_context.wrap_socket(self.socket, server_side=True)
        self.port = self.server_address[1]
        self.scheme = "https" if ssl_context else "http"
        self.thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def url(self, path: str = "/", host: str = "127.0.0.1") -> str:
        return f"{self.scheme}://{host}:{self.port}{path}"

    def stop(self):
        self.shutdown()
        self.server_close()


@pytest.fixture(scope="module")
def _http_server():
    server = _Server()
    yield server
    server.stop()


@pytest.fixture
def server(_http_server):
    _http_server.seen.clear()
    return _http_server


# The SSRF suite: hostile URLs, none of them fetched ---------------------------------------------

HOSTILE_URLS = [
    # Loopback, in every spelling a resolver accepts.
    "http://127.0.0.1/",
    "http://2130706433/",
    "http://0177.0.0.1/",
    "http://0x7f.0.0.1/",
    "http://0x7f000001/",
    "http://127.1/",
    "http://0/",
    "http://0.0.0.0/",
    "http://%31%32%37.0.0.1/",
    "http://[::1]/",
    "http://[::]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:7f00:1]/",
    "http://[::127.0.0.1]/",
    "http://[2002:7f00:1::]/",
    "http://localhost/",
    "http://localhost./",
    "http://LOCALHOST/",
    "http://app.localhost/",
    # Cloud metadata, by address and by name.
    "http://169.254.169.254/latest/meta-data/",
    "https://169.254.169.254/",
    "http://[::ffff:169.254.169.254]/",
    "http://[::ffff:a9fe:a9fe]/",
    "http://[64:ff9b::a9fe:a9fe]/",
    "http://[fd00:ec2::254]/",
    "http://100.100.100.200/",
    "http://192.0.0.192/",
    "http://metadata.google.internal/computeMetadata/v1/",
    "http://METADATA.GOOGLE.INTERNAL./",
    "http://metadata/",
    "http://instance-data/latest/",
    "http://metadata.goog/",
    # Private, shared, link-local, site-local.
    "http://10.0.0.1/",
    "http://192.168.1.1/",
    "http://172.16.0.1/",
    "http://172.31.255.255/",
    "http://100.64.0.1/",
    "http://[fd00::1]/",
    "http://[fe80::1]/",
    "http://[fe80::1%25eth0]/",
    "http://[fec0::1]/",
    "http://[::ffff:10.0.0.1]/",
    "http://[::ffff:192.168.0.1]/",
    "http://[64:ff9b::a00:1]/",
    "http://[2002:a00:1::]/",
    "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/",
    # Multicast, broadcast, reserved, benchmarking, documentation.
    "http://224.0.0.1/",
    "http://[ff02::1]/",
    "http://[ff0e::1]/",
    "http://255.255.255.255/",
    "http://240.0.0.1/",
    "http://198.18.0.1/",
    "http://192.0.2.1/",
    "http://203.0.113.5/",
    "http://[2001:db8::1]/",
    # Names that are not public.
    "http://intranet/",
    "http://printer.local/",
    "http://router.lan/",
    "http://nas.home.arpa/",
    # Credentials, schemes, ports, and malformed URLs.
    "http://user:pass@example.com/",
    "http://example.com@127.0.0.1/",
    "file:///etc/passwd",
    "gopher://example.com:70/_GET%20/",
    "ftp://example.com/",
    "dict://example.com:11211/stat",
    "javascript:alert(1)",
    "example.com/without-scheme",
    "http://example.com:22/",
    "http://example.com:25/",
    "http://example.com:0/",
    "http://example.com\\@127.0.0.1/",
    "http://example.com/\r\nX-Injected: 1",
    "http:///no-host",
    "",
]


@pytest.mark.parametrize("url", HOSTILE_URLS)
def test_fetch_refuses_a_hostile_url_before_connecting(url):
    with pytest.raises(UnsafeURL) as refused:
        fetch(url)
    assert refused.value.message.endswith(".")
    assert str(refused.value) == refused.value.message


@pytest.mark.parametrize("url", HOSTILE_URLS)
def test_validate_url_refuses_a_hostile_url_without_fetching(url):
    with pytest.raises(UnsafeURL) as refused:
        validate_url(url)
    assert refused.value.message


HOSTILE_NAMES = {
    "internal.example.test": ["10.1.2.3"],
    "mixed.example.test": ["93.184.216.34", "10.0.0.1"],
    "mixed6.example.test": ["2606:4700::1111", "fd00::1"],
    "metadata-alias.example.test": ["169.254.169.254"],
    "loopback-alias.example.test": ["127.0.0.1"],
    "mapped.example.test": ["::ffff:10.0.0.1"],
    "nat64.example.test": ["64:ff9b::a9fe:a9fe"],
    "cgnat.example.test": ["100.64.1.1"],
}


@pytest.mark.parametrize("name", sorted(HOSTILE_NAMES))
def test_fetch_refuses_a_name_when_any_resolved_address_is_not_public(fake_dns, name):
    fake_dns(HOSTILE_NAMES)
    with pytest.raises(UnsafeURL) as refused:
        fetch(f"https://{name}/hook")
    assert f"The host {name} resolves to" in refused.value.message


def test_a_refusal_names_the_address_and_why():
    with pytest.raises(UnsafeURL) as refused:
        fetch("http://[::ffff:169.254.169.254]/")
    assert refused.value.message == (
        "The address ::ffff:169.254.169.254 is the IPv4-mapped IPv6 form of 169.254.169.254, "
        "the cloud metadata address, which is refused."
    )


def test_validate_url_does_not_resolve_names(fake_dns):
    fake_dns(HOSTILE_NAMES)
    validate_url("https://internal.example.test/hook")  # fetch refuses it once resolved
    validate_url("https://unregistered.example.com/hook")  # the guard would fail the test on a lookup


@pytest.mark.parametrize(
    "url",
    [
        "https://example.com/",
        "http://example.com:8080/path?q=1#frag",
        "https://hooks.example.com:443/x",
        "http://93.184.216.34/",
        "https://[2606:4700:4700::1111]/dns-query",
        "https://bücher.example/",
        "https://EXAMPLE.com./",
        "http://[64:ff9b::808:808]/",
    ],
)
def test_validate_url_accepts_public_urls(url):
    validate_url(url)


def test_safe_http_errors_share_one_base():
    for error in (UnsafeURL, FetchError, FetchTimeout, ResponseTooLarge, TooManyRedirects):
        assert issubclass(error, SafeHttpError)
    for error in (FetchTimeout, ResponseTooLarge, TooManyRedirects):
        assert issubclass(error, FetchError)
    assert not issubclass(UnsafeURL, FetchError)
    assert not issubclass(SafeHttpError, OSError)


@pytest.mark.parametrize(
    "ip",
    ["8.8.8.8", "93.184.216.34", "1.1.1.1", "2606:4700:4700::1111", "2a00:1450:4001::200e", "::ffff:8.8.8.8", "64:ff9b::808:808"],
)
def test_is_public_address_accepts_public_addresses(ip):
    assert is_public_address(ip)


@pytest.mark.parametrize(
    "ip",
    [
        "127.0.0.1",
        "127.255.255.254",
        "::1",
        "0.0.0.0",
        "::",
        "10.0.0.1",
        "172.16.0.1",
        "192.168.0.1",
        "169.254.169.254",
        "169.254.1.1",
        "100.64.0.1",
        "100.127.255.255",
        "198.18.0.1",
        "198.19.255.255",
        "192.0.0.192",
        "192.0.2.1",
        "198.51.100.1",
        "203.0.113.1",
        "224.0.0.1",
        "239.255.255.250",
        "240.0.0.1",
        "255.255.255.255",
        "192.88.99.1",
        "fc00::1",
        "fd12:3456::1",
        "fe80::1",
        "fe80::1%eth0",
        "fec0::1",
        "ff02::1",
        "ff0e::1",
        "2001:db8::1",
        "3fff::1",
        "100::1",
        "2001::1",
        "::ffff:127.0.0.1",
        "::ffff:10.0.0.1",
        "::ffff:0:a00:1",
        "::127.0.0.1",
        "64:ff9b::7f00:1",
        "64:ff9b::a00:1",
        "64:ff9b:1::1",
        "2002:a9fe:a9fe::1",
        "2002:c0a8:1::1",
        "not an address",
    ],
)
def test_is_public_address_refuses_everything_else(ip):
    assert not is_public_address(ip)


# Loopback: refused by default, fetched only through the allowance ------------------------------


def test_the_default_refuses_a_local_server(server):
    with pytest.raises(UnsafeURL) as refused:
        fetch(server.url("/hello"))
    assert refused.value.message == "The address 127.0.0.1 is a loopback address, which is refused."
    assert server.seen == []


def test_the_allowance_fetches_a_local_server(server, loopback):
    response = fetch(server.url("/hello"))
    assert response.status == 200
    assert response.ok
    assert response.body == b"hello"
    assert response.text == "hello"
    assert response.headers["content-type"] == "text/plain; charset=utf-8"
    assert response.url == server.url("/hello")
    assert response.history == ()
    assert not response.truncated
    assert 0 < response.elapsed < 5


def test_the_allowance_setting_fetches_a_local_server(server, settings):
    settings.SAFE_HTTP_ALLOW_LOOPBACK = True
    assert fetch(server.url("/hello")).body == b"hello"


def test_the_allowance_ends_with_its_block(server):
    with safe_http.allow_loopback():
        fetch(server.url("/hello"))
    with pytest.raises(UnsafeURL):
        fetch(server.url("/hello"))


@pytest.mark.parametrize(
    "url",
    [
        "http://10.0.0.1/",
        "http://169.254.169.254/latest/meta-data/",
        "http://metadata.google.internal/",
        "http://[fd00::1]/",
        "http://0.0.0.0/",
        "http://[::]/",
        "http://[::ffff:127.0.0.1]/",
        "http://[64:ff9b::7f00:1]/",
        "http://0177.0.0.1/",
    ],
)
def test_the_allowance_lets_nothing_but_loopback_through(loopback, url):
    with pytest.raises(UnsafeURL):
        fetch(url)


@pytest.mark.parametrize("name", ["internal.example.test", "metadata-alias.example.test", "mixed.example.test"])
def test_the_allowance_still_refuses_a_name_resolving_to_private_space(fake_dns, loopback, name):
    fake_dns(HOSTILE_NAMES)
    with pytest.raises(UnsafeURL):
        fetch(f"http://{name}/")


def test_our_user_agent_is_sent(server, loopback, settings):
    fetch(server.url("/hello"))
    assert server.seen[-1]["headers"]["User-Agent"] == settings.SAFE_HTTP_USER_AGENT


def test_the_user_agent_can_be_set_per_call(server, loopback):
    fetch(server.url("/hello"), user_agent="SvcBeacon/1.0")
    assert server.seen[-1]["headers"]["User-Agent"] == "SvcBeacon/1.0"
    fetch(server.url("/hello"), headers={"user-agent": "SvcBeacon/1.0"})
    assert server.seen[-1]["headers"]["User-Agent"] == "SvcBeacon/1.0"


def test_a_json_body_is_posted_and_the_json_helper_parses_the_answer(server, loopback):
    response = fetch(server.url("/echo"), method="POST", json={"event": "ping"}, headers={"X-Signature": "abc"})
    echo = response.json()
    assert echo["method"] == "POST"
    assert json.loads(echo["body"]) == {"event": "ping"}
    assert echo["headers"]["X-Signature"] == "abc"
    assert echo["headers"]["Content-Type"] == "application/json"


def test_a_status_is_returned_not_raised(server, loopback):
    response = fetch(server.url("/missing"))
    assert response.status == 404
    assert not response.ok


def test_a_closed_port_is_a_fetch_error_not_a_refusal(loopback):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(FetchError) as failed:
        fetch(f"http://127.0.0.1:{port}/")
    assert failed.value.message == "The connection to 127.0.0.1 failed."


# Connect-time pinning: the socket goes to the address that was checked --------------------------


def test_a_name_connects_to_its_validated_address_with_its_own_host_header(server, loopback, fake_dns):
    fake_dns({"pinned.example.test": ["127.0.0.1"]})
    response = fetch(server.url("/echo", host="pinned.example.test"))
    assert response.json()["headers"]["Host"] == f"pinned.example.test:{server.port}"


def test_a_name_is_resolved_once_so_a_rebinding_answer_is_never_used(server, loopback, fake_dns, monkeypatch):
    fake_dns({"rebind.example.test": ["127.0.0.1"]})
    resolve = socket.getaddrinfo
    lookups = []

    def rebinding_resolver(host, *args, **kwargs):
        answer = resolve(host, *args, **kwargs)
        if host == "rebind.example.test":
            lookups.append(host)
            fake_dns({"rebind.example.test": ["10.0.0.1"]})  # every later lookup answers private space
        return answer

    monkeypatch.setattr(socket, "getaddrinfo", rebinding_resolver)
    response = fetch(server.url("/hello", host="rebind.example.test"))
    assert response.body == b"hello"
    assert lookups == ["rebind.example.test"]


def test_a_redirect_to_a_rebound_name_is_refused_at_its_hop(server, loopback, fake_dns):
    fake_dns({"internal.example.test": ["10.1.2.3"]})
    with pytest.raises(UnsafeURL) as refused:
        fetch(server.url("/to?url=" + quote("http://internal.example.test/admin")))
    assert refused.value.message == (
        "A redirect to internal.example.test was refused: "
        "the host internal.example.test resolves to 10.1.2.3, a private address, which is refused."
    )


# Redirects -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "target",
    [
        "http://10.0.0.5/",
        "http://169.254.169.254/latest/meta-data/iam/",
        "http://[::ffff:169.254.169.254]/",
        "http://metadata.google.internal/",
        "http://2130706433/",
        "file:///etc/passwd",
        "gopher://127.0.0.1:6379/_FLUSHALL",
        "http://user:pw@127.0.0.1/",
    ],
)
def test_a_redirect_to_a_refused_url_is_refused_at_the_hop(server, loopback, target):
    with pytest.raises(UnsafeURL) as refused:
        fetch(server.url("/to?url=" + quote(target)))
    assert refused.value.message.startswith("A redirect from 127.0.0.1 was refused: ")
    assert len(server.seen) == 1


def test_redirects_are_followed_to_the_final_url(server, loopback):
    response = fetch(server.url("/redirect/3"))
    assert response.body == b"hello"
    assert response.url == server.url("/hello")
    assert response.history == (server.url("/redirect/3"), server.url("/redirect/2"), server.url("/redirect/1"))


def test_the_redirect_cap_is_enforced(server, loopback, settings):
    assert fetch(server.url("/redirect/3"), max_redirects=3).status == 200
    with pytest.raises(TooManyRedirects) as failed:
        fetch(server.url("/redirect/3"), max_redirects=2)
    assert failed.value.message == "The URL redirected more than 2 times."
    settings.SAFE_HTTP_MAX_REDIRECTS = 1
    with pytest.raises(TooManyRedirects):
        fetch(server.url("/redirect/2"))


def test_redirects_can_be_left_unfollowed(server, loopback):
    response = fetch(server.url("/redirect/1"), allow_redirects=False)
    assert response.status == 302
    assert response.headers["Location"] == "/hello"


def test_a_303_turns_a_post_into_a_get_without_its_body(server, loopback):
    response = fetch(server.url("/to?status=303&url=/echo"), method="POST", body=b"payload")
    assert response.json()["method"] == "GET"
    assert response.json()["body"] == ""


def test_a_307_keeps_the_method_and_body(server, loopback):
    response = fetch(server.url("/to?status=307&url=/echo"), method="POST", body=b"payload")
    assert response.json()["method"] == "POST"
    assert response.json()["body"] == "payload"


def test_a_redirect_to_another_host_drops_credentials(server, loopback, fake_dns):
    fake_dns({"other.example.test": ["127.0.0.1"]})
    secret = {"Authorization": "Bearer s3cret", "Cookie": "session=s3cret"}
    same = fetch(server.url("/to?url=/echo"), headers=secret)
    assert same.json()["headers"]["Authorization"] == "Bearer s3cret"
    other = fetch(server.url("/to?url=" + quote(server.url("/echo", host="other.example.test"))), headers=secret)
    assert "Authorization" not in other.json()["headers"]
    assert "Cookie" not in other.json()["headers"]


# Size and time caps ----------------------------------------------------------------------------


def test_a_body_at_the_cap_is_read_whole(server, loopback):
    response = fetch(server.url("/bytes/1024"), max_bytes=1024)
    assert len(response.body) == 1024
    assert not response.truncated


def test_a_declared_body_past_the_cap_is_refused(server, loopback):
    with pytest.raises(ResponseTooLarge) as failed:
        fetch(server.url("/bytes/5000"), max_bytes=1024)
    assert failed.value.message == "The response from 127.0.0.1 is larger than 1024 bytes."


def test_an_undeclared_body_past_the_cap_is_stopped_while_streaming(server, loopback):
    with pytest.raises(ResponseTooLarge):
        fetch(server.url("/unsized/50000"), max_bytes=1024)


def test_a_compressed_body_is_capped_on_its_decoded_size(server, loopback):
    with pytest.raises(ResponseTooLarge):
        fetch(server.url("/gzip/1000000"), max_bytes=10_000)
    assert len(fetch(server.url("/gzip/5000"), max_bytes=10_000).body) == 5000


def test_truncate_cuts_the_body_at_the_cap(server, loopback):
    for path in ("/bytes/5000", "/unsized/50000"):
        response = fetch(server.url(path), max_bytes=1024, truncate=True)
        assert response.body == b"x" * 1024
        assert response.truncated


def test_the_settings_cap_applies_by_default(server, loopback, settings):
    settings.SAFE_HTTP_MAX_BYTES = 2048
    with pytest.raises(ResponseTooLarge):
        fetch(server.url("/bytes/4096"))


def test_a_stalled_server_times_out(server, loopback):
    started = time.monotonic()
    with pytest.raises(FetchTimeout) as failed:
        fetch(server.url("/stall"), timeout=0.5)
    assert time.monotonic() - started < 1.4
    assert failed.value.message == "127.0.0.1 did not answer within 0.5 seconds."


def test_the_deadline_stops_a_server_that_drips_bytes(server, loopback):
    started = time.monotonic()
    with pytest.raises(FetchTimeout) as failed:
        fetch(server.url("/drip"), timeout=0.5, deadline=1)
    assert time.monotonic() - started < 1.8
    assert failed.value.message == "The fetch from 127.0.0.1 took longer than its deadline."


# Logs ------------------------------------------------------------------------------------------


def test_our_logs_never_hold_header_values_or_the_query(server, loopback, caplog):
    caplog.set_level("DEBUG", logger="core.safe_http")
    fetch(server.url("/to?token=s3cret&url=/echo"), headers={"Authorization": "Bearer s3cret"})
    with pytest.raises(UnsafeURL):
        fetch("http://10.0.0.1/?token=s3cret", headers={"Authorization": "Bearer s3cret"})
    with pytest.raises(FetchTimeout):
        fetch(server.url("/stall?token=s3cret"), timeout=0.2)
    ours = [record.getMessage() for record in caplog.records if record.name == "core.safe_http"]
    assert len(ours) == 3
    assert not any("s3cret" in message for message in ours)


# TLS: the pinned address, with SNI and the certificate checked against the name ----------------


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory):
    directory = tmp_path_factory.mktemp("tls")
    now = datetime.datetime.now(datetime.UTC)

    def certificate(subject_key, issuer_key, subject, issuer, *, ca: bool, names=()):
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
            .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
            .public_key(subject_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(hours=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        )
        if ca:
            builder = builder.add_extension(
                x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True
            ).add_extension(x509.SubjectKeyIdentifier.from_public_key(subject_key.public_key()), critical=False)
        else:
            builder = builder.add_extension(
                x509.SubjectAlternativeName([x509.DNSName(name) for name in names]), critical=False
            ).add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_key.public_key()), critical=False)
        return builder.sign(issuer_key, hashes.SHA256())

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_cert = certificate(ca_key, ca_key, "safe_http test CA", "safe_http test CA", ca=True)
    leaf_key = ec.generate_private_key(ec.SECP256R1())
    leaf_cert = certificate(leaf_key, ca_key, "pinned.example.test", "safe_http test CA", ca=False, names=["pinned.example.test"])
    (directory / "ca.pem").write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    (directory / "leaf.pem").write_bytes(leaf_cert.public_bytes(serialization.Encoding.PEM))
    (directory / "leaf.key").write_bytes(
        leaf_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(directory / "leaf.pem", directory / "leaf.key")
    server_names: list[str | None] = []
    context.sni_callback = lambda sock, name, ctx: server_names.append(name)
    server = _Server(context)
    server.ca_file = str(directory / "ca.pem")
    server.server_names = server_names
    yield server
    server.stop()


def test_tls_checks_the_certificate_against_the_name_while_connecting_to_the_pinned_address(
    tls_server, loopback, fake_dns, monkeypatch
):
    monkeypatch.setattr(safe_http, "TLS_CA_BUNDLE", tls_server.ca_file)
    fake_dns({"pinned.example.test": ["127.0.0.1"]})
    tls_server.server_names.clear()
    response = fetch(tls_server.url("/hello", host="pinned.example.test"))
    assert response.body == b"hello"
    assert tls_server.server_names == ["pinned.example.test"]


def test_tls_refuses_a_certificate_for_another_name(tls_server, loopback, fake_dns, monkeypatch):
    monkeypatch.setattr(safe_http, "TLS_CA_BUNDLE", tls_server.ca_file)
    fake_dns({"other.example.test": ["127.0.0.1"]})
    with pytest.raises(FetchError) as failed:
        fetch(tls_server.url("/hello", host="other.example.test"))
    assert failed.value.message == "The TLS connection to other.example.test failed (certificate or handshake)."


def test_tls_refuses_a_certificate_from_an_untrusted_authority(tls_server, loopback, fake_dns):
    fake_dns({"pinned.example.test": ["127.0.0.1"]})
    with pytest.raises(FetchError):
        fetch(tls_server.url("/hello", host="pinned.example.test"))
