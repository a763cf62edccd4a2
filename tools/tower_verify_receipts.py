#!/usr/bin/env python3
"""Verify a range of Tower receipts offline, with the public key alone.

    curl -s -H "Authorization: Bearer $SVC_KEY" "$BASE/api/v1/tower/receipts/export?from=1" > receipts.json
    curl -s "$BASE/api/v1/tower/receipts/public-key" | python3 -c 'import json,sys; print(json.load(sys.stdin)["public_key_pem"])' > tower.pem
    python3 tools/tower_verify_receipts.py receipts.json --public-key tower.pem

Input: the export's JSON ({"receipts": [...]}), a JSON list of receipts, or one receipt per line.
For each receipt, in sequence order: the sequence follows the previous one, `hash` is SHA-256 of
the signed bytes (`payload_b64`), `prev_hash` is the previous receipt's hash (64 zeros before
sequence 1), the signed body names that same position, and the Ed25519 signature verifies under the
public key. Prints {ok, checked, first_break, latest_sequence} and exits 0 when intact, 1 when not.
Needs only Python 3 and `cryptography`; nothing of the service.
"""

import argparse
import base64
import binascii
import hashlib
import json
import sys

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import load_pem_public_key

GENESIS = "0" * 64


def load(path: str) -> list[dict]:
    text = open(path, encoding="utf-8").read()
    try:
        data = json.loads(text)
    except ValueError:
        data = [json.loads(line) for line in text.splitlines() if line.strip()]
    if isinstance(data, dict):
        data = data.get("receipts", [data])
    return sorted(data, key=lambda r: r.get("sequence", 0))


def verify(receipts: list[dict], public_key: Ed25519PublicKey) -> dict:
    report = {"ok": True, "checked": 0, "first_break": None,
              "latest_sequence": max((r.get("sequence", 0) for r in receipts), default=0)}

    def broken(sequence, reason, message):
        report.update(ok=False, first_break={"sequence": sequence, "reason": reason, "message": message})
        return report

    expected = receipts[0]["sequence"] if receipts else 1
    prev_hash = GENESIS if expected == 1 else receipts[0].get("prev_hash")
    for receipt in receipts:
        if receipt.get("sequence") != expected:
            return broken(expected, "sequence_gap", f"Receipt {expected} is missing.")
        try:
            payload = base64.b64decode(receipt["payload_b64"], validate=True)
            signature = base64.b64decode(receipt["signature"], validate=True)
        except (KeyError, binascii.Error, ValueError):
            return broken(expected, "malformed", "The receipt lacks a base64 payload or signature.")
        if hashlib.sha256(payload).hexdigest() != receipt.get("hash"):
            return broken(expected, "hash_mismatch", "The payload does not hash to the receipt's hash.")
        if receipt.get("prev_hash") != prev_hash:
            return broken(expected, "prev_hash_mismatch", "The receipt does not name the previous receipt's hash.")
        try:
            body = json.loads(payload)
        except ValueError:
            body = None
        if not isinstance(body, dict) or body.get("sequence") != expected or body.get("prev_hash") != prev_hash:
            return broken(expected, "body_mismatch", "The signed body names another position.")
        try:
            public_key.verify(signature, payload)
        except InvalidSignature:
            return broken(expected, "signature_invalid", "The signature does not verify under the public key.")
        report["checked"] += 1
        prev_hash = receipt["hash"]
        expected += 1
    return report


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("receipts", help="the export's JSON, a JSON list, or JSON lines")
    parser.add_argument("--public-key", required=True, help="PEM file of GET /api/v1/tower/receipts/public-key")
    args = parser.parse_args(argv)
    public_key = load_pem_public_key(open(args.public_key, "rb").read())
    if not isinstance(public_key, Ed25519PublicKey):
        parser.error("the public key is not an Ed25519 key")
    report = verify(load(args.receipts), public_key)
    print(json.dumps(report))
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
