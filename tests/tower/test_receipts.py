import base64
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from core import signing
from tests.tower.helpers import act, small_order
from tower.models import Receipt

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def chain(shop):
    """Five actions: ten receipts (decision and executed each) in alice's chain."""
    for n in range(5):
        assert act(shop.agent, "create_sales_order", small_order(quantity=n + 1), f"k{n}").status_code == 200
    return shop


def verify(tenant, query=""):
    response = tenant.client.get(f"/api/v1/tower/receipts/verify{query}")
    assert response.status_code == 200
    return response.json()


def test_an_intact_chain_verifies(chain):
    report = verify(chain)
    assert report["ok"] is True and report["checked"] == 10 and report["first_break"] is None
    assert report["latest_sequence"] == 10
    assert verify(chain, "?from=4&to=7")["checked"] == 4


def test_a_receipt_is_read_by_id_or_sequence_and_its_signature_verifies(chain):
    by_sequence = chain.client.get("/api/v1/tower/receipts/2").json()
    by_id = chain.agent.get(f"/api/v1/tower/receipts/{by_sequence['id']}").json()
    assert by_sequence == by_id
    payload = base64.b64decode(by_id["payload_b64"])
    assert hashlib.sha256(payload).hexdigest() == by_id["hash"]
    assert json.loads(payload) == by_id["body"] and by_id["body"]["prev_hash"] == by_id["prev_hash"]
    assert signing.canonical_json(by_id["body"]) == payload
    pem = chain.client.get("/api/v1/tower/receipts/public-key").json()["public_key_pem"]
    assert signing.verify(by_id["body"], by_id["signature"], pem)
    third = chain.client.get("/api/v1/tower/receipts/3").json()
    assert third["prev_hash"] == by_id["hash"]


def test_the_public_key_needs_no_key(client):
    body = client.get("/api/v1/tower/receipts/public-key").json()
    assert body == signing.public_key_record() and body["algorithm"] == "Ed25519"


def test_an_unknown_receipt_or_another_tenants_is_a_404(chain, bob):
    assert chain.client.get("/api/v1/tower/receipts/999").status_code == 404
    assert chain.client.get("/api/v1/tower/receipts/rcpt_nope").status_code == 404
    rid = Receipt.objects.get(sequence=1).id
    assert bob.client.get(f"/api/v1/tower/receipts/{rid}").status_code == 404
    assert bob.client.get("/api/v1/tower/receipts/1").status_code == 404  # bob's own chain is empty


def test_a_bad_range_is_a_400(chain):
    assert chain.client.get("/api/v1/tower/receipts/verify?from=0").status_code == 400
    assert chain.client.get("/api/v1/tower/receipts/verify?from=x").status_code == 400
    backwards = chain.client.get("/api/v1/tower/receipts/verify?from=5&to=2")
    assert backwards.status_code == 400 and backwards.json()["field"] == "to"


def test_one_changed_byte_is_a_hash_mismatch_at_that_receipt(chain):
    row = Receipt.objects.get(sequence=4)
    payload = bytearray(bytes(row.payload))
    payload[payload.index(b'"kind":"') + 8] ^= 0x01
    Receipt.objects.filter(pk=row.pk).update(payload=bytes(payload))
    report = verify(chain)
    assert report["ok"] is False and report["checked"] == 3
    assert report["first_break"]["sequence"] == 4 and report["first_break"]["reason"] == "hash_mismatch"


def test_an_edited_and_rehashed_receipt_is_a_signature_failure(chain):
    row = Receipt.objects.get(sequence=6)
    body = json.loads(bytes(row.payload))
    body["operation"] = "cancel_sales_order"
    payload = signing.canonical_json(body)
    Receipt.objects.filter(pk=row.pk).update(payload=payload, hash=hashlib.sha256(payload).hexdigest())
    report = verify(chain)
    # Receipt 6 fails its signature (and 7 would no longer link to it).
    assert report["first_break"]["sequence"] == 6 and report["first_break"]["reason"] == "signature_invalid"
    assert report["checked"] == 5


def test_a_deleted_receipt_is_a_gap(chain):
    Receipt.objects.filter(sequence=5).delete()
    report = verify(chain)
    assert report["first_break"]["sequence"] == 5 and report["first_break"]["reason"] == "sequence_gap"
    assert report["checked"] == 4


def test_a_deleted_last_receipt_is_a_gap_too(chain):
    Receipt.objects.filter(sequence=10).delete()
    report = verify(chain)
    assert report["ok"] is False and report["first_break"]["sequence"] == 10


def test_two_reordered_receipts_break_the_links(chain):
    a, b = Receipt.objects.get(sequence=3), Receipt.objects.get(sequence=4)
    Receipt.objects.filter(pk=a.pk).update(sequence=1000)
    Receipt.objects.filter(pk=b.pk).update(sequence=3)
    Receipt.objects.filter(pk=a.pk).update(sequence=4)
    report = verify(chain)
    assert report["first_break"]["sequence"] == 3 and report["first_break"]["reason"] == "prev_hash_mismatch"


def _resign(row, private_key, key_id=None):
    body = json.loads(bytes(row.payload))
    if key_id:
        body["key_id"] = key_id
    payload = signing.canonical_json(body)
    signature = base64.b64encode(private_key.sign(payload)).decode()
    Receipt.objects.filter(pk=row.pk).update(payload=payload, hash=hashlib.sha256(payload).hexdigest(), signature=signature,
                                             key_id=key_id or row.key_id)


def test_a_receipt_resigned_with_another_key_fails(chain):
    _resign(Receipt.objects.get(sequence=7), Ed25519PrivateKey.generate())
    report = verify(chain)
    assert report["first_break"]["sequence"] == 7 and report["first_break"]["reason"] == "signature_invalid"


def test_a_receipt_resigned_under_another_key_id_is_an_unknown_key(chain):
    _resign(Receipt.objects.get(sequence=2), Ed25519PrivateKey.generate(), key_id="ed25519-0000000000000000")
    report = verify(chain)
    assert report["first_break"]["sequence"] == 2 and report["first_break"]["reason"] == "unknown_key"


def _export(tenant, tmp_path) -> tuple[Path, Path]:
    body = tenant.client.get("/api/v1/tower/receipts/export").json()
    receipts = tmp_path / "receipts.json"
    receipts.write_text(json.dumps(body))
    pem = tmp_path / "public.pem"
    pem.write_text(body["public_key"]["public_key_pem"])
    return receipts, pem


def _offline(receipts: Path, pem: Path) -> dict:
    run = subprocess.run([sys.executable, str(ROOT / "tools" / "tower_verify_receipts.py"), str(receipts), "--public-key", str(pem)],
                         capture_output=True, text=True, timeout=60)
    return {"code": run.returncode, **json.loads(run.stdout)}


def test_the_offline_verifier_accepts_an_exported_range_and_finds_each_tampering(chain, tmp_path):
    receipts, pem = _export(chain, tmp_path)
    assert _offline(receipts, pem) == {"code": 0, "ok": True, "checked": 10, "first_break": None, "latest_sequence": 10}
    exported = json.loads(receipts.read_text())

    edited = json.loads(json.dumps(exported))
    raw = bytearray(base64.b64decode(edited["receipts"][3]["payload_b64"]))
    raw[-3] ^= 1
    edited["receipts"][3]["payload_b64"] = base64.b64encode(bytes(raw)).decode()
    receipts.write_text(json.dumps(edited))
    report = _offline(receipts, pem)
    assert report["code"] == 1 and report["first_break"]["sequence"] == 4 and report["first_break"]["reason"] == "hash_mismatch"

    dropped = json.loads(json.dumps(exported))
    del dropped["receipts"][4]
    receipts.write_text(json.dumps(dropped))
    gap = _offline(receipts, pem)["first_break"]
    assert (gap["sequence"], gap["reason"]) == (5, "sequence_gap")

    other = tmp_path / "other.pem"
    other.write_bytes(Ed25519PrivateKey.generate().public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    receipts.write_text(json.dumps(exported))
    assert _offline(receipts, other)["first_break"]["reason"] == "signature_invalid"


@pytest.mark.skipif(shutil.which("openssl") is None, reason="OpenSSL is not installed")
def test_openssl_verifies_a_receipt_with_the_public_key_alone(chain, tmp_path):
    receipt = chain.client.get("/api/v1/tower/receipts/3").json()
    (tmp_path / "pub.pem").write_text(chain.client.get("/api/v1/tower/receipts/public-key").json()["public_key_pem"])
    (tmp_path / "body.bin").write_bytes(base64.b64decode(receipt["payload_b64"]))
    (tmp_path / "sig.bin").write_bytes(base64.b64decode(receipt["signature"]))
    command = ["openssl", "pkeyutl", "-verify", "-pubin", "-inkey", "pub.pem", "-rawin", "-in", "body.bin", "-sigfile", "sig.bin"]
    good = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True)
    assert good.returncode == 0 and "Signature Verified Successfully" in good.stdout
    digest = subprocess.run(["openssl", "dgst", "-sha256", "-r", "body.bin"], cwd=tmp_path, capture_output=True, text=True)
    assert digest.stdout.split()[0] == receipt["hash"] == chain.client.get("/api/v1/tower/receipts/4").json()["prev_hash"]
    tampered = bytearray(base64.b64decode(receipt["payload_b64"]))
    tampered[-2] ^= 1
    (tmp_path / "body.bin").write_bytes(bytes(tampered))
    bad = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True)
    assert bad.returncode != 0
