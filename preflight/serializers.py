"""Request and response shapes of Preflight (spec 2.6)."""

from decimal import ROUND_FLOOR, Decimal, InvalidOperation

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from solders.pubkey import Pubkey

from preflight import constants
from preflight.checking import Policy


def parse_address(value: object, name: str) -> Pubkey:
    """A base58 Solana address, or a ValidationError naming the field."""
    if not isinstance(value, str) or not 32 <= len(value) <= 44:
        raise serializers.ValidationError(f"{name} is not a Solana address (base58, 32 to 44 characters).")
    try:
        return Pubkey.from_string(value)
    except BaseException as exc:  # noqa: BLE001 - solders raises ValueError or a pyo3 panic
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        raise serializers.ValidationError(f"{name} is not a Solana address (base58 of 32 bytes).") from None


@extend_schema_field({"type": "object", "additionalProperties": {"oneOf": [{"type": "integer", "minimum": 0}, {"type": "string", "pattern": "^[0-9]+$"}]}})
class AtomicAmountsField(serializers.Field):
    """An object of mint address to a whole number of atomic units (a JSON integer or a string of digits)."""

    default_error_messages = {"invalid": "must be an object of mint address to a whole number of atomic units."}

    def to_internal_value(self, data):
        if not isinstance(data, dict):
            self.fail("invalid")
        if len(data) > constants.MAX_POLICY_ENTRIES:
            raise serializers.ValidationError(f"lists {len(data)} mints; at most {constants.MAX_POLICY_ENTRIES}.")
        out: dict[str, int] = {}
        for mint, amount in data.items():
            address = str(parse_address(mint, f"mint {str(mint)[:60]!r}"))
            if isinstance(amount, bool) or not (isinstance(amount, int) or (isinstance(amount, str) and amount.isascii() and amount.isdigit())):
                raise serializers.ValidationError(f"the amount for {address} must be a whole number of atomic units.")
            value = int(amount)
            if not 0 <= value <= constants.U64_MAX:
                raise serializers.ValidationError(f"the amount for {address} must be between 0 and {constants.U64_MAX}.")
            out[address] = value
        return out

    def to_representation(self, value):
        return {mint: str(amount) for mint, amount in value.items()}


class PolicyIn(serializers.Serializer):
    wallet = serializers.CharField(help_text="The wallet's address; it must sign the transaction.")
    max_sol_out = serializers.DecimalField(
        max_digits=19, decimal_places=9, min_value=Decimal(0), required=False, coerce_to_string=False,
        help_text="Most SOL the transaction may take from the wallet, fees and rent included; 0 allows none.",
    )
    max_sol_out_lamports = serializers.IntegerField(
        min_value=0, max_value=constants.U64_MAX, required=False, help_text="The same limit in lamports (a whole number)."
    )
    max_token_out = AtomicAmountsField(required=False, help_text="Mint to atomic units; a mint not listed may not leave at all.")
    min_token_in = AtomicAmountsField(required=False, help_text="Mint to atomic units that must arrive (for a swap).")
    allowed_programs = serializers.ListField(
        child=serializers.CharField(), required=False, max_length=constants.MAX_POLICY_ENTRIES,
        help_text="When given, every program run, top-level or inner, must be listed.",
    )
    allow_delegation = serializers.BooleanField(required=False, default=False)

    def to_internal_value(self, data):
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError({str(unknown[0])[:60]: ["is not a policy field."]})
        return super().to_internal_value(data)

    def validate(self, attrs):
        wallet = parse_address(attrs["wallet"], "wallet")
        if "max_sol_out" in attrs and "max_sol_out_lamports" in attrs:
            raise serializers.ValidationError("give max_sol_out or max_sol_out_lamports, not both.")
        if "max_sol_out_lamports" in attrs:
            lamports = attrs["max_sol_out_lamports"]
        elif "max_sol_out" in attrs:
            try:
                lamports = int((attrs["max_sol_out"] * constants.LAMPORTS_PER_SOL).to_integral_value(rounding=ROUND_FLOOR))
            except InvalidOperation:
                raise serializers.ValidationError({"max_sol_out": ["is not a number."]}) from None
            if lamports > constants.U64_MAX:
                raise serializers.ValidationError({"max_sol_out": ["is more SOL than can exist."]})
        else:
            raise serializers.ValidationError({"max_sol_out": ["This field is required (or give max_sol_out_lamports)."]})
        allowed = attrs.get("allowed_programs")
        if allowed is not None:
            allowed = frozenset(str(parse_address(p, "allowed_programs entry")) for p in allowed)
        return Policy(
            wallet=wallet,
            max_sol_out_lamports=lamports,
            max_token_out=attrs.get("max_token_out") or {},
            min_token_in=attrs.get("min_token_in") or {},
            allowed_programs=allowed,
            allow_delegation=attrs.get("allow_delegation", False),
        )


class CheckIn(serializers.Serializer):
    transaction = serializers.CharField(
        max_length=constants.MAX_TRANSACTION_CHARS,
        help_text="The serialized transaction (legacy or v0) in base64, signed or not; signatures are ignored.",
    )
    policy = PolicyIn()


class ReportIn(serializers.Serializer):
    signature = serializers.CharField(max_length=100, help_text="The signature (base58) of the transaction that landed.")


class RecordQueryIn(serializers.Serializer):
    limit = serializers.IntegerField(required=False, default=20, min_value=1, max_value=100)
    cursor = serializers.CharField(required=False, max_length=200)


# Responses (for the schema; the services build the bodies).


class ReasonOut(serializers.Serializer):
    code = serializers.CharField(help_text="One of: " + ", ".join(constants.REASON_CODES) + ".")
    detail = serializers.CharField()


class ReceiptOut(serializers.Serializer):
    payload = serializers.DictField(help_text="The signed document: id, decision, reason_codes, programs, digest, covered, checked_at, fresh_until, details_sha256.")
    key_id = serializers.CharField()
    algorithm = serializers.CharField()
    signature = serializers.CharField(help_text="Ed25519 over the RFC 8785 canonical JSON of payload, base64.")


class ReportPublicOut(serializers.Serializer):
    id = serializers.CharField()
    signature = serializers.CharField()
    reported_at = serializers.DateTimeField()
    found = serializers.BooleanField()
    slot = serializers.IntegerField(allow_null=True)
    block_time = serializers.DateTimeField(allow_null=True)
    succeeded = serializers.BooleanField()
    same_transaction = serializers.BooleanField()
    within_window = serializers.BooleanField()
    exceeded = serializers.ListField(child=serializers.CharField())
    miss = serializers.BooleanField()
    covered_miss = serializers.BooleanField()


class VerdictPublicOut(serializers.Serializer):
    id = serializers.CharField()
    decision = serializers.CharField(help_text="allow or refuse.")
    reason_codes = serializers.ListField(child=serializers.CharField())
    programs = serializers.ListField(child=serializers.CharField())
    digest = serializers.CharField()
    covered = serializers.BooleanField()
    checked_at = serializers.DateTimeField()
    fresh_until = serializers.DateTimeField()
    receipt = ReceiptOut()
    record_url = serializers.CharField()
    reports = ReportPublicOut(many=True)


class VerdictOut(VerdictPublicOut):
    reasons = ReasonOut(many=True)
    effects = serializers.DictField()
    freshness_seconds = serializers.IntegerField()
    simulator = serializers.CharField()
    details_salt = serializers.CharField(help_text="With reasons, effects and policy, recomputes receipt.payload.details_sha256.")
    policy = serializers.DictField()


class RecordOut(serializers.Serializer):
    verdicts = VerdictPublicOut(many=True)
    next_cursor = serializers.CharField(allow_null=True)


class ReportOut(ReportPublicOut):
    check_id = serializers.CharField()
    chain = serializers.DictField(help_text="What the chain showed for the wallet: SOL and tokens out and in, the fee.")


class OverviewOut(serializers.Serializer):
    product = serializers.CharField()
    description = serializers.CharField()
    chain = serializers.CharField()
    simulator = serializers.CharField()
    freshness_seconds = serializers.IntegerField()
    max_accounts = serializers.IntegerField()
    reason_codes = serializers.ListField(child=serializers.DictField(child=serializers.CharField()))
    tracked = serializers.CharField()
    decisions = serializers.DictField(child=serializers.CharField())
    guarantee = serializers.DictField(help_text="active (false), terms, covered_programs, payout, not_covered, reserve.")
    verification = serializers.DictField(child=serializers.CharField())
    endpoints = serializers.DictField(child=serializers.CharField())
