"""Tower's request and response shapes."""

from rest_framework import serializers

from tower import constants
from tower.errors import CODES
from tower.operations import NAME_PATTERN


class TowerErrorOut(serializers.Serializer):
    """Tower's error shape: the service envelope with a machine code (and the field, for a bad input)."""

    error = serializers.CharField(help_text="One sentence saying what is wrong.")
    code = serializers.ChoiceField(choices=sorted(CODES), required=False,
                                   help_text="What went wrong, for programs. " + " ".join(f"`{k}`: {v}" for k, v in CODES.items()))
    field = serializers.CharField(required=False, help_text="The field at fault, e.g. `input/lines/0/quantity`.")


class TowerAgentIn(serializers.Serializer):
    name = serializers.CharField(max_length=100, help_text="A name for people, at most 100 characters.")
    scopes = serializers.ListField(
        child=serializers.RegexField(r"^(\*|[a-z][a-z0-9_]{0,63})$", max_length=64,
                                     error_messages={"invalid": "Each scope is * or an operation name: a lowercase letter, then up to 63 lowercase letters, digits or underscores."}),
        min_length=1, max_length=constants.SCOPES_MAX,
        help_text="1 to 50 operation names, or `*` for every operation.",
    )


class TowerAgentOut(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    scopes = serializers.ListField(child=serializers.CharField())
    prefix = serializers.CharField(help_text="The first characters of the key, safe to show.")
    is_active = serializers.BooleanField()
    created_at = serializers.DateTimeField()
    last_used_at = serializers.DateTimeField(allow_null=True)
    revoked_at = serializers.DateTimeField(allow_null=True)


class TowerAgentCreatedOut(TowerAgentOut):
    key = serializers.CharField(help_text="The agent key, `svc_agent_…`: shown this once, never again.")
    key_shown_once = serializers.BooleanField()


class TowerAgentListOut(serializers.Serializer):
    agents = TowerAgentOut(many=True)
    active_limit = serializers.IntegerField(help_text="The most active agents an organization may have.")


class TowerOperationOut(serializers.Serializer):
    name = serializers.CharField()
    kind = serializers.CharField(help_text="`read` or `write`.")
    description = serializers.CharField()
    input_schema = serializers.JSONField(help_text="JSON Schema (2020-12) of `input`.")
    compensable = serializers.BooleanField()
    compensation = serializers.CharField(allow_null=True, help_text="How an executed action is undone.")
    facts = serializers.ListField(child=serializers.CharField(), help_text="Facts the policy rules can test.")


class TowerCapabilitiesOut(serializers.Serializer):
    agent_id = serializers.UUIDField(allow_null=True, help_text="Null when called with the organization key (every operation).")
    operations = TowerOperationOut(many=True)


class TowerDecideIn(serializers.Serializer):
    operation = serializers.RegexField(NAME_PATTERN, max_length=64)
    input = serializers.DictField(help_text="The operation's input; must match its JSON Schema.")


class TowerReasonOut(serializers.Serializer):
    rule = serializers.CharField(allow_null=True, help_text="The policy rule's name; null for the default.")
    decision = serializers.CharField(help_text="`auto`, `review` or `reject`.")
    message = serializers.CharField()


class TowerDecisionOut(serializers.Serializer):
    operation = serializers.CharField()
    kind = serializers.CharField(help_text="`read` or `write`.")
    decision = serializers.CharField(help_text="`auto`, `review` or `reject`.")
    reasons = TowerReasonOut(many=True)
    facts = serializers.JSONField(help_text="What the policy looked at.")
    compensable = serializers.BooleanField()


class TowerActionIn(serializers.Serializer):
    operation = serializers.RegexField(NAME_PATTERN, max_length=64)
    input = serializers.DictField()
    idempotency_key = serializers.CharField(max_length=constants.IDEMPOTENCY_KEY_MAX,
                                            help_text="Per agent: the same key and body give the same action (24 hours).")
    dry_run = serializers.BooleanField(default=False, help_text="Decide and validate only: nothing is stored or executed.")


class TowerReceiptRefOut(serializers.Serializer):
    id = serializers.CharField()
    sequence = serializers.IntegerField()
    kind = serializers.CharField()


class TowerReviewOut(serializers.Serializer):
    reviewer = serializers.CharField()
    note = serializers.CharField()
    reviewed_at = serializers.DateTimeField()


class TowerActionOut(serializers.Serializer):
    """An action. States: `executed`, `pending_review`, `rejected`, `declined`, `failed`, `compensated`
    (and `dry_run`, never stored). Moves: a request goes to executed (auto), failed (auto, the legacy
    system refused), pending_review (review) or rejected (reject); a reviewer's approval moves
    pending_review to executed (or failed), a decline to declined; compensation moves executed to
    compensated."""

    id = serializers.CharField(allow_null=True, help_text="`act_…`; null for a dry run.")
    agent_id = serializers.UUIDField(allow_null=True)
    operation = serializers.CharField()
    input = serializers.JSONField()
    dry_run = serializers.BooleanField()
    idempotency_key = serializers.CharField(allow_null=True)
    decision = serializers.CharField(help_text="`auto`, `review` or `reject`.")
    reasons = TowerReasonOut(many=True)
    facts = serializers.JSONField()
    state = serializers.ChoiceField(choices=["executed", "pending_review", "rejected", "declined", "failed", "compensated", "dry_run"])
    result = serializers.JSONField(allow_null=True, help_text="What the legacy system returned.")
    compensable = serializers.BooleanField(help_text="Whether POST compensate would undo it now.")
    compensation = serializers.JSONField(allow_null=True, help_text="What the compensation returned.")
    review = TowerReviewOut(allow_null=True)
    receipts = TowerReceiptRefOut(many=True)
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class TowerActionRefusedOut(TowerActionOut):
    """The action, refused (policy) or failed (legacy system), with the error shape's keys."""

    error = serializers.CharField()
    code = serializers.ChoiceField(choices=["policy_rejected", "execution_failed", "idempotency_mismatch"])
    field = serializers.CharField(required=False)


class TowerReceiptOut(serializers.Serializer):
    id = serializers.CharField(help_text="`rcpt_…`")
    sequence = serializers.IntegerField(help_text="Position in the organization's chain, from 1.")
    kind = serializers.CharField(help_text="`decision`, `executed`, `failed`, `rejected`, `reviewed` or `compensated`.")
    action_id = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField()
    prev_hash = serializers.CharField(help_text="SHA-256 (hex) of the previous receipt's payload; 64 zeros for the first.")
    hash = serializers.CharField(help_text="SHA-256 (hex) of the payload.")
    body = serializers.JSONField(help_text="The payload, decoded.")
    payload_b64 = serializers.CharField(help_text="The signed bytes: RFC 8785 canonical JSON of `body`, standard base64.")
    signature = serializers.CharField(help_text="Ed25519 signature of the payload bytes, standard base64.")
    algorithm = serializers.CharField()
    key_id = serializers.CharField()


class TowerReceiptExportOut(serializers.Serializer):
    receipts = TowerReceiptOut(many=True)
    public_key = serializers.JSONField(help_text="The key record of GET receipts/public-key.")


class TowerVerifyQueryIn(serializers.Serializer):
    locals()["from"] = serializers.IntegerField(min_value=1, max_value=2**62, default=1, help_text="First sequence number.")
    to = serializers.IntegerField(min_value=1, max_value=2**62, required=False,
                                  help_text="Last sequence number; the chain head when left out (at most 10,000 per call).")


class TowerBreakOut(serializers.Serializer):
    sequence = serializers.IntegerField()
    reason = serializers.ChoiceField(choices=["sequence_gap", "prev_hash_mismatch", "hash_mismatch", "body_mismatch",
                                              "signature_invalid", "unknown_key"])
    message = serializers.CharField()
    receipt_id = serializers.CharField(required=False)


class TowerVerifyOut(serializers.Serializer):
    ok = serializers.BooleanField()
    checked = serializers.IntegerField(help_text="Receipts found sound before the first break.")
    first_break = TowerBreakOut(allow_null=True)
    latest_sequence = serializers.IntegerField()
    locals()["from"] = serializers.IntegerField()
    to = serializers.IntegerField()


class TowerPublicKeyOut(serializers.Serializer):
    key_id = serializers.CharField()
    algorithm = serializers.CharField()
    public_key_pem = serializers.CharField()


class TowerTemplateOut(serializers.Serializer):
    slug = serializers.CharField()
    name = serializers.CharField()
    operations = serializers.ListField(child=serializers.CharField())
    customers = serializers.IntegerField()
    products = serializers.IntegerField()
    policy_rules = serializers.IntegerField()
    samples = serializers.ListField(child=serializers.CharField())


class TowerSubscriptionOut(serializers.Serializer):
    status = serializers.CharField(help_text="`pilot` while Tower runs free against the mock adapter.")
    plan = serializers.CharField()
    quota = serializers.JSONField(help_text="actions_per_month, decisions_per_day, active_agents.")
    usage = serializers.JSONField(help_text="This month's actions and today's decisions, each with its limit.")
    pricing = serializers.JSONField()
    subscription = serializers.JSONField(allow_null=True, help_text="The Stripe subscription (status, cancel_at_period_end, "
                                         "current_period_end, cancels_at), or null during the pilot.")
    billing_enabled = serializers.BooleanField()


class TowerCheckoutOut(serializers.Serializer):
    url = serializers.URLField(help_text="The Stripe Checkout page to send the payer to.")
    plan = serializers.CharField()
    expires_in_seconds = serializers.IntegerField()


class TowerCancelOut(serializers.Serializer):
    plan = serializers.CharField()
    cancels_at = serializers.DateTimeField(allow_null=True, help_text="When the subscription ends (the end of the current period).")
    subscription_status = serializers.CharField()
