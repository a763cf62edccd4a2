"""One idempotency mechanism for `Idempotency-Key` (evaluate, batch) and Tower's `idempotency_key`.

The first request with a key inserts a row (a unique constraint makes exactly one request win),
runs, and stores its successful response. A retry with the same key and body within 24 hours gets
the stored response; a different body gets 422; a retry while the first is still running gets 409.
A failed request (status 400 and above, or a crash) frees the key so the caller can try again.
"""

import hashlib
import re
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction

from core import clock
from core.errors import BadRequest, Conflict, Unprocessable
from core.models import IdempotencyRecord
from core.signing import canonical_json

KEY_PATTERN = re.compile(r"^[A-Za-z0-9_.:-]{1,255}$")
REPLAY_HEADER = "Idempotency-Replayed"


@dataclass(frozen=True)
class Lease:
    """This request holds the key and must finish or release it."""

    record_id: int


@dataclass(frozen=True)
class Replay:
    """The stored outcome of an earlier request with the same key and body."""

    status_code: int
    body: object
    headers: dict


def idempotency_key_check(key: str, *, name: str = "Idempotency-Key") -> str:
    if not KEY_PATTERN.match(key):
        raise BadRequest(f"{name} must be 1 to 255 characters of letters, digits, '_', '.', ':' or '-'.")
    return key


def request_fingerprint(*parts: object) -> str:
    """SHA-256 over the canonical JSON of what makes two requests "the same"."""
    return hashlib.sha256(canonical_json(list(parts))).hexdigest()


def idempotency_begin(*, scope: str, key: str, fingerprint: str) -> Lease | Replay:
    """Claim `key` in `scope`, or return the stored response, or raise 409/422."""
    ttl = timedelta(seconds=settings.IDEMPOTENCY_TTL_SECONDS)
    lock = timedelta(seconds=settings.IDEMPOTENCY_LOCK_SECONDS)
    for _ in range(5):
        now = clock.now()
        # Read first: a replay (the common retry) then costs one SELECT, not a failed INSERT.
        record = IdempotencyRecord.objects.filter(scope=scope, key=key).first()
        if record is None:
            try:
                with transaction.atomic():
                    record = IdempotencyRecord.objects.create(
                        scope=scope, key=key, fingerprint=fingerprint, created_at=now, locked_until=now + lock
                    )
                return Lease(record.pk)
            except IntegrityError:
                continue  # another request inserted it first: read it on the next turn
        if record.created_at <= now - ttl:
            IdempotencyRecord.objects.filter(pk=record.pk, created_at=record.created_at).delete()
            continue
        if record.fingerprint != fingerprint:
            raise Unprocessable("This idempotency key was already used with a different request body.")
        if record.state == IdempotencyRecord.DONE:
            return Replay(record.status_code, record.body, record.headers)
        if record.locked_until <= now:
            taken = IdempotencyRecord.objects.filter(
                pk=record.pk, state=IdempotencyRecord.RUNNING, locked_until=record.locked_until
            ).update(locked_until=now + lock)
            if taken:
                return Lease(record.pk)
        raise Conflict("A request with this idempotency key is still in progress; retry when it has finished.")
    raise Conflict("A request with this idempotency key is still in progress; retry when it has finished.")


def idempotency_finish(lease: Lease, *, status_code: int, body: object, headers: dict | None = None) -> None:
    """Store the outcome so that retries replay it."""
    IdempotencyRecord.objects.filter(pk=lease.record_id).update(
        state=IdempotencyRecord.DONE, status_code=status_code, body=body, headers=headers or {}
    )


def idempotency_release(lease: Lease) -> None:
    """Free the key after a failure, so the same request can be tried again."""
    IdempotencyRecord.objects.filter(pk=lease.record_id, state=IdempotencyRecord.RUNNING).delete()


def idempotency_purge() -> int:
    """Delete records past their 24 hours; returns how many."""
    cutoff = clock.now() - timedelta(seconds=settings.IDEMPOTENCY_TTL_SECONDS)
    deleted, _ = IdempotencyRecord.objects.filter(created_at__lte=cutoff).delete()
    return deleted
