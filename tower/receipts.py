"""The receipt chain: one gapless, signed, hash-linked sequence per organization.

An append locks the organization's chain head (SELECT ... FOR UPDATE) inside the caller's
transaction, so the receipt commits with the effect it attests or not at all, and a rolled-back
transaction gives its number back. The payload is the RFC 8785 bytes of the receipt body; `hash`
is SHA-256 of those bytes, the body names the previous receipt's hash, and the payload is signed
with the service's Ed25519 key (core.signing).
"""

import base64
import hashlib
import json

from cryptography.exceptions import InvalidSignature
from django.db import IntegrityError, transaction

from core import clock, signing
from core.ids import new_id
from tower.models import ChainHead, Receipt

GENESIS_HASH = "0" * 64
RECEIPT_TYPE = "svc.tower.receipt"
VERIFY_MAX_RANGE = 10_000


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def chain_head_ensure(org) -> None:
    """Create the organization's chain head once (outside the append's transaction, race-safe)."""
    if ChainHead.objects.filter(org=org).exists():
        return
    try:
        with transaction.atomic():
            ChainHead.objects.create(org=org)
    except IntegrityError:
        pass  # another request created it


def receipts_append(*, org, entries: list[dict]) -> list[Receipt]:
    """Append receipts for `entries` (each: kind, action and fields of the body), in one locked step.

    Must run inside transaction.atomic(); call chain_head_ensure(org) before the transaction.
    """
    assert transaction.get_connection().in_atomic_block, "receipts are appended inside the effect's transaction"
    head = ChainHead.objects.select_for_update().get(org=org)
    key = signing.signing_key()
    now = clock.now()
    rows = []
    for entry in entries:
        entry = dict(entry)
        action = entry.pop("action", None)
        sequence = head.last_sequence + 1
        body = {
            "type": RECEIPT_TYPE,
            "v": 1,
            "chain": str(org.pk),
            "sequence": sequence,
            "prev_hash": head.last_hash,
            "issued_at": now.isoformat().replace("+00:00", "Z"),
            "key_id": key.key_id,
            **entry,
        }
        payload = signing.canonical_json(body)
        signature = signing.sign(body)
        digest = sha256_hex(payload)
        rows.append(Receipt(id=new_id("rcpt_"), org=org, sequence=sequence, prev_hash=head.last_hash, hash=digest,
                            payload=payload, signature=signature["signature"], key_id=signature["key_id"],
                            kind=entry["kind"], action=action, created_at=now))
        head.last_sequence, head.last_hash = sequence, digest
    Receipt.objects.bulk_create(rows)
    ChainHead.objects.filter(pk=head.pk).update(last_sequence=head.last_sequence, last_hash=head.last_hash)
    return rows


def receipt_record(receipt: Receipt) -> dict:
    payload = bytes(receipt.payload)
    return {
        "id": receipt.id,
        "sequence": receipt.sequence,
        "kind": receipt.kind,
        "action_id": receipt.action_id,
        "created_at": receipt.created_at.isoformat().replace("+00:00", "Z"),
        "prev_hash": receipt.prev_hash,
        "hash": receipt.hash,
        "body": json.loads(payload),
        "payload_b64": base64.b64encode(payload).decode("ascii"),
        "signature": receipt.signature,
        "algorithm": signing.ALGORITHM,
        "key_id": receipt.key_id,
    }


def receipt_get(*, org, ref: str) -> Receipt | None:
    """A receipt of the organization's chain by id (`rcpt_…`) or sequence number."""
    if ref.isdigit() and len(ref) <= 18:
        return Receipt.objects.filter(org=org, sequence=int(ref)).first()
    return Receipt.objects.filter(org=org, id=ref).first()


def _public_keys() -> dict:
    """Key id to public key: the key ring's current key (core.signing holds one)."""
    key = signing.signing_key()
    return {key.key_id: key.public_key}


def chain_verify(*, org, start: int = 1, end: int | None = None) -> dict:
    """Recompute hashes and links and check signatures over [start, end] of the organization's chain.

    `first_break` names the first receipt that fails and why: sequence_gap, prev_hash_mismatch,
    hash_mismatch, body_mismatch, signature_invalid or unknown_key; `checked` counts the receipts
    found sound before it.
    """
    head = ChainHead.objects.filter(org=org).first()
    latest = Receipt.objects.filter(org=org).order_by("-sequence").values_list("sequence", flat=True).first() or 0
    latest_head = head.last_sequence if head else 0
    end = min(end if end is not None else max(latest, latest_head), start + VERIFY_MAX_RANGE - 1)
    report = {"ok": True, "checked": 0, "first_break": None, "latest_sequence": max(latest, latest_head),
              "from": start, "to": end}
    if end < start:
        return report
    if start == 1:
        prev_hash = GENESIS_HASH
    else:
        prev_hash = Receipt.objects.filter(org=org, sequence=start - 1).values_list("hash", flat=True).first()
    keys = _public_keys()
    expected = start
    rows = Receipt.objects.filter(org=org, sequence__gte=start, sequence__lte=end).order_by("sequence")
    for receipt in rows.iterator(chunk_size=500):
        problem = _check(receipt, expected, prev_hash, keys, org)
        if problem:
            report.update(ok=False, first_break=problem)
            return report
        report["checked"] += 1
        prev_hash = receipt.hash
        expected += 1
    if expected <= end and expected <= report["latest_sequence"]:
        report.update(ok=False, first_break={"sequence": expected, "reason": "sequence_gap",
                                             "message": f"Receipt {expected} is missing."})
    return report


def _check(receipt: Receipt, expected: int, prev_hash: str | None, keys: dict, org) -> dict | None:
    def broken(reason, message, **extra):
        return {"sequence": expected, "receipt_id": receipt.id, "reason": reason, "message": message, **extra}

    if receipt.sequence != expected:
        return {"sequence": expected, "reason": "sequence_gap", "message": f"Receipt {expected} is missing.",
                "found": receipt.sequence}
    payload = bytes(receipt.payload)
    digest = sha256_hex(payload)
    if digest != receipt.hash:
        return broken("hash_mismatch", "The payload does not hash to the stored hash.", expected=receipt.hash, found=digest)
    if prev_hash is not None and receipt.prev_hash != prev_hash:
        return broken("prev_hash_mismatch", "The receipt does not name the previous receipt's hash.",
                      expected=prev_hash, found=receipt.prev_hash)
    try:
        body = json.loads(payload)
    except ValueError:
        body = None
    if not isinstance(body, dict) or body.get("sequence") != expected or body.get("prev_hash") != receipt.prev_hash \
            or body.get("chain") != str(org.pk):
        return broken("body_mismatch", "The signed body names another position or chain.")
    public_key = keys.get(receipt.key_id)
    if public_key is None:
        return broken("unknown_key", f"No public key {receipt.key_id} in the key ring.")
    try:
        public_key.verify(base64.b64decode(receipt.signature, validate=True), payload)
    except (InvalidSignature, ValueError):
        return broken("signature_invalid", "The signature does not verify under the receipt's key.")
    return None
