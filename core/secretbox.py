"""Secrets we must be able to read back (webhook signing secrets), encrypted at rest.

Fernet (AES-128-CBC + HMAC-SHA256, from `cryptography`) under a key derived from SECRET_KEY with
HKDF, so a copy of the database alone does not reveal them.
"""

import base64
import functools

from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings


@functools.cache
def _fernet(secret_key: str) -> Fernet:
    key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=b"svc secretbox v1").derive(secret_key.encode())
    return Fernet(base64.urlsafe_b64encode(key))


def seal(plaintext: str) -> str:
    return _fernet(settings.SECRET_KEY).encrypt(plaintext.encode()).decode("ascii")


def unseal(token: str) -> str:
    """The plaintext; ValueError when the token was not sealed under this SECRET_KEY or was altered."""
    try:
        return _fernet(settings.SECRET_KEY).decrypt(token.encode("ascii")).decode()
    except InvalidToken:
        raise ValueError("the sealed secret cannot be opened with this SECRET_KEY") from None
