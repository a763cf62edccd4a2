"""Preflight's operations: check a transaction, read a verdict, the public record, reports, the overview.

`check_create` is the one check every caller uses: the REST view, and later x402, MCP and A2A.
"""

import base64
import hashlib
import secrets
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import IntegrityError
from django.db import transaction as db_transaction
from solders.signature import Signature
from solders.transaction import VersionedTransaction

from core import clock, signing
from core.errors import BadGateway, BadRequest, NotFound, ServiceUnavailable, Unprocessable
from core.ids import is_valid_id, new_id
from core.pagination import page_newest_first
from preflight import constants, simulators
from preflight.checking import NATIVE_MINT, Policy, run_check
from preflight.decoding import decode_transaction
from preflight.models import Check, Report

CHECK_PREFIX = "pfc_"
REPORT_PREFIX = "pfr_"
RECEIPT_TYPE = "preflight.verdict"


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def details_sha256(*, salt: str, policy: dict, reasons: list, effects: dict) -> str:
    """The commitment to the private part of a verdict that the signed payload carries."""
    document = {"salt": salt, "policy": policy, "reasons": reasons, "effects": effects}
    return hashlib.sha256(signing.canonical_json(document)).hexdigest()


def check_request_parse(data: object) -> tuple[str, Policy]:
    """The body of a check request (spec 2.6) as (transaction, policy); BadRequest naming the field.

    For callers that are not DRF views with `validated()` (x402, MCP, A2A): same rules, same messages.
    """
    from rest_framework.exceptions import ValidationError

    from core.errors import validation_message
    from preflight.serializers import CheckIn

    serializer = CheckIn(data=data)
    try:
        serializer.is_valid(raise_exception=True)
    except ValidationError as exc:
        raise BadRequest(validation_message(exc.detail)[0]) from None
    return serializer.validated_data["transaction"], serializer.validated_data["policy"]


def check_create(*, transaction: str, policy: Policy, org=None, channel: str = "api", simulator=None) -> Check:
    """Decode, simulate and judge one transaction; sign and store the verdict.

    Raises BadRequest when the transaction cannot be decoded, BadGateway when the node cannot be
    reached (no verdict is made, nothing is stored).
    """
    decoded = decode_transaction(transaction)
    simulator = simulator or simulators.configured()
    try:
        outcome = run_check(decoded, policy, simulator)
    except simulators.NodeUnavailable as exc:
        raise simulators.node_unavailable(exc) from None
    now = clock.now()
    check_id = new_id(CHECK_PREFIX)
    salt = secrets.token_hex(16)
    policy_json = policy.as_json()
    payload = {
        "type": RECEIPT_TYPE,
        "id": check_id,
        "decision": outcome.decision,
        "reason_codes": [r["code"] for r in outcome.reasons],
        "programs": outcome.programs,
        "digest": decoded.digest,
        "covered": outcome.covered,
        "checked_at": _iso(now),
        "fresh_until": _iso(now + timedelta(seconds=constants.FRESHNESS_SECONDS)),
        "details_sha256": details_sha256(salt=salt, policy=policy_json, reasons=outcome.reasons, effects=outcome.effects),
    }
    return Check.objects.create(
        id=check_id,
        org=org,
        channel=channel,
        created_at=now,
        fresh_until=now + timedelta(seconds=constants.FRESHNESS_SECONDS),
        decision=outcome.decision,
        reason_codes=payload["reason_codes"],
        programs=outcome.programs,
        digest=decoded.digest,
        covered=outcome.covered,
        simulator=outcome.simulator,
        receipt={"payload": payload, **signing.sign(payload)},
        reasons=outcome.reasons,
        effects=outcome.effects,
        policy=policy_json,
        transaction=base64.b64encode(bytes(decoded.transaction)).decode(),
        account_keys=outcome.keys,
        details_salt=salt,
    )


def check_get(*, check_id: str) -> Check:
    if not is_valid_id(check_id, CHECK_PREFIX):
        raise NotFound("No verdict has this id.")
    check = Check.objects.filter(pk=check_id).first()
    if check is None:
        raise NotFound("No verdict has this id.")
    return check


def record_url(check: Check) -> str:
    return f"{settings.BASE_URL}/api/v1/preflight/checks/{check.id}"


def report_public(report: Report) -> dict:
    return {
        "id": report.id,
        "signature": report.signature,
        "reported_at": _iso(report.created_at),
        "found": report.slot is not None,
        "slot": report.slot,
        "block_time": _iso(report.block_time) if report.block_time else None,
        "succeeded": report.succeeded,
        "same_transaction": report.same_transaction,
        "within_window": report.within_window,
        "exceeded": report.exceeded,
        "miss": report.miss,
        "covered_miss": report.covered_miss,
    }


def verdict_public(check: Check, reports: list[Report] | None = None) -> dict:
    """What the record publishes: never the wallet, amounts, details or the transaction."""
    receipt = check.receipt
    if reports is None:
        reports = list(check.reports.order_by("created_at", "id"))
    return {
        "id": check.id,
        "decision": check.decision,
        "reason_codes": check.reason_codes,
        "programs": check.programs,
        "digest": check.digest,
        "covered": check.covered,
        "checked_at": receipt["payload"]["checked_at"],
        "fresh_until": receipt["payload"]["fresh_until"],
        "receipt": receipt,
        "record_url": record_url(check),
        "reports": [report_public(r) for r in reports],
    }


def verdict_full(check: Check) -> dict:
    """The whole verdict, for the organization that asked (and the caller of a keyless x402 check)."""
    return {
        **verdict_public(check),
        "reasons": check.reasons,
        "effects": check.effects,
        "freshness_seconds": constants.FRESHNESS_SECONDS,
        "simulator": check.simulator,
        "details_salt": check.details_salt,
        "policy": check.policy,
    }


def record_list(*, limit: int, cursor: str | None = None) -> tuple[list[dict], str | None]:
    rows, next_cursor = page_newest_first(Check.objects.all(), limit=limit, cursor=cursor, pk_field="id")
    reports: dict[str, list[Report]] = {}
    for report in Report.objects.filter(check_row__in=[r.id for r in rows]).order_by("created_at", "id"):
        reports.setdefault(report.check_row_id, []).append(report)
    return [verdict_public(row, reports.get(row.id, [])) for row in rows], next_cursor


# Reports: a landed transaction, read from the node and compared with the verdict.


def _signature(value: str) -> Signature:
    try:
        signature = Signature.from_string(value.strip())
    except BaseException as exc:  # noqa: BLE001 - solders raises ValueError or a pyo3 panic
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        raise BadRequest("signature is not a Solana transaction signature (base58 of 64 bytes).") from None
    if signature == Signature.default():
        raise BadRequest("signature is all zeros: report the signature of a transaction that landed.")
    return signature


def report_create(*, check_id: str, signature: str) -> tuple[Report, bool]:
    """Record what the chain showed for a landed transaction reported against a verdict.

    Returns the report and whether it is new (a signature reported twice returns the first report).
    """
    check = check_get(check_id=check_id)
    sig = _signature(signature)
    existing = Report.objects.filter(check_row=check, signature=str(sig)).first()
    if existing is not None:
        return existing, False
    client = simulators.rpc_client()
    if client is None:
        raise ServiceUnavailable("Reports are read from a Solana node, and this service has none configured (PREFLIGHT_RPC_URL).")
    try:
        landed = client.call(
            "getTransaction",
            [str(sig), {"encoding": "base64", "maxSupportedTransactionVersion": 0, "commitment": client.commitment}],
        )
    except simulators.NodeUnavailable as exc:
        raise simulators.node_unavailable(exc) from None
    except simulators.NodeError as exc:
        raise BadGateway(f"The Solana node refused getTransaction: {exc.code} {exc.message}") from None
    if landed is None:
        raise Unprocessable(f"The transaction {sig} was not found on the chain (not landed, or not yet confirmed).")
    try:
        seen = _read_landed(landed, sig)
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise BadGateway(f"The Solana node's getTransaction answer is malformed ({str(exc)[:200]}).") from None
    report = Report(id=new_id(REPORT_PREFIX), check_row=check, signature=str(sig), created_at=clock.now())
    _compare(report, check, seen)
    try:
        with db_transaction.atomic():
            report.save(force_insert=True)
    except IntegrityError:  # reported twice at once: the first one stands
        return Report.objects.get(check_row=check, signature=str(sig)), False
    return report, True


def _read_landed(landed: dict, sig: Signature) -> dict:
    encoded = landed["transaction"]
    raw = encoded[0] if isinstance(encoded, list) else encoded["transaction"][0]
    tx = VersionedTransaction.from_bytes(base64.b64decode(raw, validate=True))
    if not tx.signatures or tx.signatures[0] != sig:
        raise ValueError("the transaction returned is not the one asked for")
    meta = landed.get("meta") or {}
    loaded = meta.get("loadedAddresses") or {}
    keys = [str(k) for k in tx.message.account_keys] + list(loaded.get("writable") or []) + list(loaded.get("readonly") or [])
    block_time = landed.get("blockTime")
    return {
        "tx": tx,
        "keys": keys,
        "slot": int(landed["slot"]),
        "block_time": datetime.fromtimestamp(int(block_time), UTC) if block_time is not None else None,
        "err": meta.get("err"),
        "fee": meta.get("fee"),
        "pre_balances": [int(x) for x in meta.get("preBalances") or []],
        "post_balances": [int(x) for x in meta.get("postBalances") or []],
        "pre_tokens": meta.get("preTokenBalances") or [],
        "post_tokens": meta.get("postTokenBalances") or [],
        "inner": meta.get("innerInstructions") or [],
    }


def _instructions(message, keys: list[str]) -> list[tuple]:
    return [
        (keys[ix.program_id_index], tuple(keys[i] if i < len(keys) else None for i in ix.accounts), bytes(ix.data))
        for ix in message.instructions
    ]


def same_transaction(check: Check, landed_tx: VersionedTransaction, landed_keys: list[str]) -> bool:
    """The landed message is the checked one, or it only adds trailing Lighthouse assertions.

    Assertion instructions a wallet appends can only make the transaction fail, never move value,
    so they do not make it "changed after the check". Anything else (other instructions, other
    accounts, another fee payer, another blockhash, priority-fee changes) does.
    """
    from solders.message import to_bytes_versioned

    if hashlib.sha256(bytes(to_bytes_versioned(landed_tx.message))).hexdigest() == check.digest:
        return True
    checked = VersionedTransaction.from_bytes(base64.b64decode(check.transaction)).message
    if landed_tx.message.recent_blockhash != checked.recent_blockhash:
        return False
    mine, theirs = _instructions(checked, check.account_keys), _instructions(landed_tx.message, landed_keys)
    while len(theirs) > len(mine) and theirs[-1][0] == constants.LIGHTHOUSE_PROGRAM:
        theirs.pop()
    signers = lambda msg, keys: keys[: msg.header.num_required_signatures]  # noqa: E731
    return mine == theirs and landed_keys[0] == check.account_keys[0] and set(signers(landed_tx.message, landed_keys)) - {None} >= set(signers(checked, check.account_keys))


def _compare(report: Report, check: Check, seen: dict) -> None:
    policy = Policy.from_json(check.policy)
    wallet = str(policy.wallet)
    keys = seen["keys"]
    report.slot = seen["slot"]
    report.block_time = seen["block_time"]
    report.succeeded = seen["err"] is None
    report.same_transaction = same_transaction(check, seen["tx"], keys)
    report.within_window = seen["block_time"] is not None and seen["block_time"] <= check.fresh_until

    sol_before = sol_after = 0
    if wallet in keys:
        index = keys.index(wallet)
        if index < len(seen["pre_balances"]) and index < len(seen["post_balances"]):
            sol_before, sol_after = seen["pre_balances"][index], seen["post_balances"][index]
    tokens: dict[str, list[int]] = {}
    for side, rows in ((0, seen["pre_tokens"]), (1, seen["post_tokens"])):
        for row in rows:
            if row.get("owner") != wallet:
                continue
            amount = int(row["uiTokenAmount"]["amount"])
            if row.get("mint") == NATIVE_MINT:
                if side == 0:
                    sol_before += amount
                else:
                    sol_after += amount
                continue
            tokens.setdefault(row["mint"], [0, 0])[side] += amount
    sol_out = max(sol_before - sol_after, 0)
    token_out = {mint: max(b - a, 0) for mint, (b, a) in tokens.items()}
    token_in = {mint: max(a - b, 0) for mint, (b, a) in tokens.items()}
    report.chain = {
        "fee_lamports": seen["fee"],
        "sol_out_lamports": str(sol_out),
        "sol_in_lamports": str(max(sol_after - sol_before, 0)),
        "tokens": [{"mint": m, "out": str(token_out[m]), "in": str(token_in[m])} for m in sorted(tokens)],
        "error": seen["err"],
    }
    exceeded = []
    if sol_out > policy.max_sol_out_lamports:
        exceeded.append("sol_out_exceeds_limit")
    if any(amount > policy.max_token_out.get(mint, 0) for mint, amount in token_out.items()):
        exceeded.append("token_out_exceeds_limit")
    report.exceeded = exceeded
    report.miss = (
        check.decision == "allow" and report.succeeded and report.same_transaction and report.within_window and bool(exceeded)
    )
    programs = {keys[ix.program_id_index] for ix in seen["tx"].message.instructions}
    for group in seen["inner"]:
        for ix in group.get("instructions") or []:
            index = ix.get("programIdIndex")
            programs.add(str(ix["programId"]) if "programId" in ix else keys[int(index)])
    report.covered_miss = report.miss and check.covered and programs <= set(constants.COVERED_PROGRAMS)


def overview() -> dict:
    return {
        "product": "preflight",
        "description": (
            "One check of one unsigned Solana transaction against your policy: it is simulated, what would leave "
            "and arrive is read from the accounts before and after, and the answer is allow or refuse with reasons. "
            "No private key is ever seen and nothing is ever sent to the chain. Every verdict is signed and published."
        ),
        "chain": "solana",
        "simulator": settings.PREFLIGHT_SIMULATOR,
        "freshness_seconds": constants.FRESHNESS_SECONDS,
        "max_accounts": settings.PREFLIGHT_MAX_ACCOUNTS,
        "reason_codes": [{"code": code, "meaning": meaning} for code, meaning in constants.REASON_CODES.items()],
        "tracked": "The wallet's SOL (with wrapped SOL in its native token accounts, fees and rent included) and every "
        "token account it owns that the transaction can write to (SPL Token and Token-2022). Not tracked: stake "
        "accounts and positions a program holds for the wallet.",
        "decisions": {
            "close_authority": "A close authority handed to another party on a token account of the wallet counts as "
            "delegate_approved (allowed with allow_delegation).",
            "wrapped_sol": "Wrapped SOL in the wallet's native token accounts is the wallet's SOL: it counts against "
            "max_sol_out, not max_token_out; the wrapped SOL mint in min_token_in is compared with SOL arriving.",
            "durable_nonce": "A durable-nonce transaction never expires; it is judged as usual, effects.durable_nonce names "
            "the nonce account, and the guarantee still covers it only if it lands within the window.",
            "assertions": "Trailing Lighthouse assertion instructions a wallet appends do not make a landed transaction "
            "'changed after the check'; any other change does.",
        },
        "guarantee": {
            "active": False,
            "terms": "If the answer was allow, the same transaction landed while the verdict was fresh (120 seconds), and it "
            "took more from the wallet than the policy permits, that is a miss; a covered miss is paid in USDC to the wallet.",
            "covered_programs": [{"address": a, "name": n} for a, n in constants.COVERED_PROGRAMS.items()],
            "payout": "The amount taken beyond the policy valued when the miss is confirmed, at most $100 per verdict and "
            "$200 per wallet per month, never more than the reserve holds, paid in the order confirmed.",
            "not_covered": [
                "a shortfall in what arrives (slippage)",
                "a transaction that ran any other program",
                "a transaction changed after the check",
                "one that landed outside the window",
                "anything arranged to produce a claim",
            ],
            "reserve": "Funded by the operator alone and not yet funded: misses are recorded and published and nothing is paid.",
        },
        "verification": {
            "public_key": f"{settings.BASE_URL}/api/v1/signing-key",
            "recipe": "Take receipt.payload, serialize it as RFC 8785 canonical JSON, and verify receipt.signature "
            "(base64, Ed25519) over those bytes with the published PEM public key whose key_id matches. "
            "With the full verdict, sha256 of the canonical JSON of {salt: details_salt, policy, reasons, effects} "
            "equals payload.details_sha256. The digest is sha256 (hex) of the serialized message.",
        },
        "endpoints": {
            "check": "POST /api/v1/preflight/checks",
            "verdict": "GET /api/v1/preflight/checks/{id}",
            "report": "POST /api/v1/preflight/checks/{id}/reports",
            "record": "GET /api/v1/preflight/record",
        },
    }

