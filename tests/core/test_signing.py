import base64
import subprocess

import pytest
from cryptography.hazmat.primitives import serialization

from core import signing


def test_a_signature_verifies_with_the_published_public_key_alone():
    payload = {"decision": "allow", "amount": 10, "nested": {"b": 1, "a": [1, 2]}, "text": "héllo"}
    signature = signing.sign(payload)
    record = signing.public_key_record()
    assert signature["key_id"] == record["key_id"] and record["algorithm"] == "Ed25519"
    assert signing.verify(payload, signature["signature"], record["public_key_pem"])


def test_any_change_to_the_payload_breaks_the_signature():
    payload = {"decision": "allow", "amount": 10}
    signature = signing.sign(payload)["signature"]
    pem = signing.public_key_record()["public_key_pem"]
    assert not signing.verify({"decision": "allow", "amount": 11}, signature, pem)
    assert not signing.verify(payload, base64.b64encode(b"\0" * 64).decode(), pem)
    assert not signing.verify(payload, "not base64!", pem)


def test_canonical_json_ignores_key_order_and_whitespace_as_rfc8785_says():
    assert signing.canonical_json({"b": 1, "a": "x"}) == b'{"a":"x","b":1}'
    assert signing.canonical_json({"a": 1.0, "u": "é"}) == '{"a":1,"u":"é"}'.encode()


def test_openssl_verifies_our_signature(tmp_path):
    payload = {"receipt": 1, "hash": "abc"}
    signature = base64.b64decode(signing.sign(payload)["signature"])
    (tmp_path / "pub.pem").write_text(signing.public_key_record()["public_key_pem"])
    (tmp_path / "msg").write_bytes(signing.canonical_json(payload))
    (tmp_path / "sig").write_bytes(signature)
    try:
        result = subprocess.run(
            ["openssl", "pkeyutl", "-verify", "-pubin", "-inkey", "pub.pem", "-rawin", "-in", "msg", "-sigfile", "sig"],
            cwd=tmp_path, capture_output=True, text=True, timeout=20,
        )
    except FileNotFoundError:
        pytest.skip("openssl is not installed")
    assert "Signature Verified Successfully" in result.stdout


def test_the_key_is_generated_once_and_kept(tmp_path, settings):
    settings.SIGNING_KEY_FILE = tmp_path / "key.pem"
    settings.SIGNING_KEY_PEM = ""
    signing.signing_key.cache_clear()
    try:
        first = signing.signing_key().key_id
        assert (settings.SIGNING_KEY_FILE.stat().st_mode & 0o777) == 0o600
        signing.signing_key.cache_clear()
        assert signing.signing_key().key_id == first
    finally:
        signing.signing_key.cache_clear()


@pytest.mark.django_db
def test_the_public_key_is_published(client):
    response = client.get("/api/v1/signing-key")
    assert response.status_code == 200
    body = response.json()
    key = serialization.load_pem_public_key(body["public_key_pem"].encode())
    assert key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    assert body["key_id"].startswith("ed25519-")
