"""The Ed25519 key ring: canonical JSON (RFC 8785), signatures anyone can verify offline.

The private key comes from SIGNING_KEY_PEM, or from SIGNING_KEY_FILE, generated there once on
first use (mode 0600). The public key is published with its id, so a verifier needs nothing but
the signed document and that PEM.
"""

import base64
import functools
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

import rfc8785
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from django.conf import settings

ALGORITHM = "Ed25519"


def canonical_json(value: object) -> bytes:
    """RFC 8785 canonical bytes of a JSON value: the bytes that are hashed and signed."""
    return rfc8785.dumps(value)


@dataclass(frozen=True)
class SigningKey:
    key_id: str
    private_key: Ed25519PrivateKey

    @property
    def public_key(self) -> Ed25519PublicKey:
        return self.private_key.public_key()

    @property
    def public_key_pem(self) -> str:
        return self.public_key.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        ).decode("ascii")


def _key_id(public_key: Ed25519PublicKey) -> str:
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return "ed25519-" + hashlib.sha256(raw).hexdigest()[:16]


def _load_or_create(path: Path) -> bytes:
    if path.exists():
        return path.read_bytes()
    path.parent.mkdir(parents=True, exist_ok=True)
    pem = Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    # O_EXCL: two processes starting at once keep one key, the one written first.
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_bytes()
    with os.fdopen(fd, "wb") as handle:
        handle.write(pem)
    return pem


@functools.cache
def signing_key() -> SigningKey:
    pem = settings.SIGNING_KEY_PEM.encode("ascii") if settings.SIGNING_KEY_PEM else _load_or_create(settings.SIGNING_KEY_FILE)
    private_key = serialization.load_pem_private_key(pem, password=None)
    if not isinstance(private_key, Ed25519PrivateKey):
        raise ValueError("The signing key must be an Ed25519 private key in PEM (PKCS#8).")
    return SigningKey(_key_id(private_key.public_key()), private_key)


def public_key_record() -> dict:
    key = signing_key()
    return {"key_id": key.key_id, "algorithm": ALGORITHM, "public_key_pem": key.public_key_pem}


def sign(payload: object) -> dict:
    """The signature over canonical_json(payload): `{key_id, algorithm, signature}` (base64)."""
    key = signing_key()
    signature = key.private_key.sign(canonical_json(payload))
    return {"key_id": key.key_id, "algorithm": ALGORITHM, "signature": base64.b64encode(signature).decode("ascii")}


def verify(payload: object, signature_b64: str, public_key_pem: str) -> bool:
    """Whether `signature_b64` signs canonical_json(payload) under the given public key."""
    try:
        public_key = serialization.load_pem_public_key(public_key_pem.encode("ascii"))
        signature = base64.b64decode(signature_b64, validate=True)
    except (ValueError, TypeError):
        return False
    if not isinstance(public_key, Ed25519PublicKey):
        return False
    try:
        public_key.verify(signature, canonical_json(payload))
    except InvalidSignature:
        return False
    return True
