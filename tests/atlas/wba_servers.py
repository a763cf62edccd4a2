"""A Web Bot Auth agent for tests: its own Ed25519 key, a key directory served over real TLS on loopback
(certificate from a throwaway CA for the agent's host name), and a signer for its requests."""

import base64
import datetime
import json
import secrets
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.x509.oid import NameOID
from http_message_signatures import HTTPMessageSigner, MappingKeyResolver, algorithms
from requests.structures import CaseInsensitiveDict

from atlas.webbotauth import DIRECTORY_PATH, MEDIA_TYPE, jwk_thumbprint


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _certificates(directory, host: str) -> tuple[str, str, str]:
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "atlas test CA")])
    ca = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(hours=1))
          .not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
          .sign(ca_key, hashes.SHA256()))
    leaf_key = ec.generate_private_key(ec.SECP256R1())
    leaf = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)]))
            .issuer_name(name).public_key(leaf_key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(host)]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    paths = (str(directory / "ca.pem"), str(directory / "leaf.pem"), str(directory / "leaf.key"))
    open(paths[0], "wb").write(ca.public_bytes(serialization.Encoding.PEM))
    open(paths[1], "wb").write(leaf.public_bytes(serialization.Encoding.PEM))
    open(paths[2], "wb").write(leaf_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                      serialization.NoEncryption()))
    return paths


class SigningAgent:
    """An agent with a key directory at https://<host>:<port>/.well-known/http-message-signatures-directory."""

    def __init__(self, tmp_path, host: str = "agent.acme-agents.com"):
        self.host = host
        self.key = Ed25519PrivateKey.generate()
        raw = self.key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        self.jwk = {"kty": "OKP", "crv": "Ed25519", "x": _b64url(raw)}
        self.keyid = jwk_thumbprint(self.jwk)
        self.directory_body: bytes = json.dumps({"keys": [{**self.jwk, "kid": self.keyid, "use": "sig"}]}).encode()
        self.content_type = MEDIA_TYPE
        self.status = 200
        self.requests: list[str] = []
        self.ca_file, cert, key = _certificates(tmp_path, host)
        agent = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                agent.requests.append(self.path)
                if self.path != DIRECTORY_PATH:
                    self.send_response(404)
                    self.end_headers()
                    return
                self.send_response(agent.status)
                self.send_header("Content-Type", agent.content_type)
                self.send_header("Content-Length", str(len(agent.directory_body)))
                self.send_header("Cache-Control", "max-age=600")
                self.end_headers()
                self.wfile.write(agent.directory_body)

            def log_message(self, *args):
                pass

        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(cert, key)
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    @property
    def origin(self) -> str:
        return f"https://{self.host}:{self.port}"

    @property
    def directory(self) -> str:
        return self.origin + DIRECTORY_PATH

    def sign(self, url: str, *, method: str = "GET", created: datetime.datetime | None = None, lifetime: int = 300,
             agent_header: str | None = None, label: str = "sig1", tag: str = "web-bot-auth") -> dict:
        """The headers of a signed request to `url` (dictionary-form Signature-Agent unless given)."""

        class Message:
            pass

        message = Message()
        message.method, message.url = method, url
        message.headers = CaseInsensitiveDict({"Signature-Agent": agent_header or f'{label}="{self.origin}"'})
        created = created or datetime.datetime.now(datetime.UTC)
        signer = HTTPMessageSigner(signature_algorithm=algorithms.ED25519,
                                   key_resolver=MappingKeyResolver(public_keys={}, private_keys={self.keyid: self.key}))
        covered = ("@authority", '"signature-agent";key="' + label + '"') if not (agent_header or "").startswith('"') else (
            "@authority", "signature-agent")
        signer.sign(message, key_id=self.keyid, created=created, expires=created + datetime.timedelta(seconds=lifetime),
                    nonce=secrets.token_urlsafe(32), label=label, tag=tag, covered_component_ids=covered)
        return dict(message.headers)

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()
