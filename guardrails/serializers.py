"""Request and response shapes of the Guardrails routes."""

from rest_framework import serializers

from guardrails.engine import rules as engine

VERDICTS = ["pass", "fail", "review"]
ACTIONS = ["block", "redact", "review", "allow"]

PARAMS_HELP = (
    "Parameters by detector: prompt_injection, toxicity, secrets: none (optional rule `threshold` 0-1 for the first two). "
    "pii: {types: [EMAIL_ADDRESS, PHONE_NUMBER, CREDIT_CARD, IBAN_CODE, NATIONAL_ID, IP_ADDRESS, CRYPTO]} (all by default). "
    "regex: {pattern, ignore_case}. words: {words: [..], whole_words: true}. "
    "topics: {topics: [{name, keywords: [..]}]}. length: {min_chars, max_chars}. "
    "language: {allowed: ['en', 'de', ..]}. links: {allowed_domains: ['example.com']} (other link domains fail)."
)


class RuleSchema(serializers.Serializer):
    """One rule: a detector, its parameters, and what a failure means."""

    id = serializers.CharField(required=False, max_length=50, help_text="Unique in the rule set; defaults to the detector name.")
    detector = serializers.ChoiceField(choices=list(engine.DETECTORS))
    action = serializers.ChoiceField(choices=list(engine.ACTIONS), required=False, default="block",
                                     help_text="What a failure means: block, redact (spans are replaced) or review.")
    params = serializers.JSONField(required=False, help_text=PARAMS_HELP)
    threshold = serializers.FloatField(required=False, min_value=0, max_value=1,
                                       help_text="For prompt_injection and toxicity: fail at or above this probability.")


class RulesField(serializers.ListField):
    """A list of rules, checked by the engine so the message names the exact field."""

    child = RuleSchema()

    def to_internal_value(self, data):
        return data  # validated by guardrails.engine.rules.rules_validate (messages name rules[i].field)


class RuleSetOut(serializers.Serializer):
    id = serializers.CharField(help_text="rs_… for a custom set; system:<slug> for a system set.")
    slug = serializers.CharField()
    name = serializers.CharField()
    description = serializers.CharField()
    system = serializers.BooleanField(help_text="System rule sets are read-only.")
    is_active = serializers.BooleanField()
    rules = RuleSchema(many=True)
    created_at = serializers.DateTimeField(allow_null=True)
    updated_at = serializers.DateTimeField(allow_null=True)


class RuleSetListOut(serializers.Serializer):
    rule_sets = RuleSetOut(many=True)


class RuleSetListQuery(serializers.Serializer):
    include_inactive = serializers.BooleanField(required=False, default=False)


class RuleSetIn(serializers.Serializer):
    slug = serializers.SlugField(max_length=64)
    name = serializers.CharField(required=False, max_length=120, default="", allow_blank=True)
    description = serializers.CharField(required=False, max_length=500, default="", allow_blank=True)
    rules = RulesField(help_text="The rules, 1 to 50.")


class RuleSetPatchIn(serializers.Serializer):
    name = serializers.CharField(required=False, max_length=120, allow_blank=True)
    description = serializers.CharField(required=False, max_length=500, allow_blank=True)
    rules = RulesField(required=False, help_text="Replaces the whole list.")
    is_active = serializers.BooleanField(required=False)


class RuleSetDeletedOut(serializers.Serializer):
    id = serializers.CharField()
    slug = serializers.CharField()
    is_active = serializers.BooleanField()


class ContextIn(serializers.Serializer):
    recipient = serializers.CharField(required=False, max_length=320, allow_blank=True,
                                      help_text="The recipient's e-mail address or phone number (or name).")
    channel = serializers.ChoiceField(required=False, choices=list(engine.CHANNELS))
    owns_contact_info = serializers.BooleanField(required=False, default=False,
                                                 help_text="True when the contact and identity data in the message is the recipient's own.")


class EvaluateIn(serializers.Serializer):
    input = serializers.CharField(trim_whitespace=False, allow_blank=False,
                                  help_text="Text to check, in any language. Keyless callers: at most 2,000 characters.")
    rule_set = serializers.SlugField(required=False, max_length=64, help_text="Slug of a system or custom rule set; `default` when omitted.")
    metadata = serializers.DictField(required=False, help_text="Kept with the record (at most 8 KB of JSON).")
    context = ContextIn(required=False, help_text="For outbound-message: recipient, channel, owns_contact_info.")


class FindingOut(serializers.Serializer):
    detector = serializers.CharField()
    type = serializers.CharField(help_text="EMAIL_ADDRESS, GITHUB_TOKEN, PATTERN, LINK, …")
    start = serializers.IntegerField(help_text="Character offset into the input (Python/Unicode code points).")
    end = serializers.IntegerField()
    score = serializers.FloatField()
    text = serializers.CharField(help_text="The matched text, masked for personal data and secrets.")


class RuleResultOut(serializers.Serializer):
    id = serializers.CharField()
    detector = serializers.CharField()
    verdict = serializers.CharField(help_text="pass, fail or review.")
    action = serializers.CharField(help_text="What this rule asks for: its action (block, redact, review) when it did not pass, else allow.")
    score = serializers.FloatField(help_text="The detector's probability (models) or strongest finding's precision.")
    findings = FindingOut(many=True)
    reasons = serializers.ListField(child=serializers.CharField(), help_text="In English, whatever the input language.")


class EvaluationOut(serializers.Serializer):
    id = serializers.CharField(help_text="eval_ followed by 16 characters from A-Za-z0-9_-.")
    rule_set = serializers.CharField()
    verdict = serializers.CharField(help_text="Aggregate verdict (pass, fail or review): the worst rule verdict.")
    recommended_action = serializers.CharField(help_text="block, redact, review or allow; precedence block > redact > review > allow.")
    confidence = serializers.FloatField(help_text="Calibrated probability that recommended_action is the right one.")
    language = serializers.CharField(allow_null=True, help_text="ISO 639-1 code of the detected input language.")
    rules = RuleResultOut(many=True)
    findings = FindingOut(many=True)
    redacted_text = serializers.CharField(allow_null=True, help_text="The input with findings replaced by [TYPE] when the action is redact.")
    signals = serializers.ListField(child=serializers.CharField(), help_text="Hidden content decoded: invisible, unicode_tags, base64, hex, comment.")
    latency_ms = serializers.FloatField()
    engine_version = serializers.CharField()
    created_at = serializers.DateTimeField()


class BatchItemIn(serializers.Serializer):
    id = serializers.CharField(max_length=64)
    input = serializers.CharField(trim_whitespace=False, allow_blank=True)
    metadata = serializers.DictField(required=False)


class BatchIn(serializers.Serializer):
    rule_set = serializers.SlugField(required=False, max_length=64)
    items = BatchItemIn(many=True, help_text="1 to 50 items, each evaluated on its own.")


class BatchErrorOut(serializers.Serializer):
    error = serializers.CharField(help_text="One sentence naming the offending item and field.")
    item = serializers.CharField(allow_null=True, required=False, help_text="The id of the offending item, when it has one.")


class BatchItemOut(serializers.Serializer):
    id = serializers.CharField()
    result = EvaluationOut(allow_null=True)
    error = serializers.CharField(allow_null=True)


class BatchOut(serializers.Serializer):
    rule_set = serializers.CharField()
    items = BatchItemOut(many=True)
    succeeded = serializers.IntegerField()
    failed = serializers.IntegerField()


class BatchFailedOut(BatchOut):
    error = serializers.CharField(help_text="Every item failed; each item's error says why.")


class EvaluationListQuery(serializers.Serializer):
    limit = serializers.IntegerField(required=False, default=20, min_value=1, max_value=100)
    cursor = serializers.CharField(required=False, max_length=500)
    verdict = serializers.CharField(required=False, max_length=10, help_text="pass, fail or review.")
    rule_set = serializers.SlugField(required=False, max_length=64)

    def validate_verdict(self, value):
        if value not in VERDICTS:
            raise serializers.ValidationError("must be pass, fail or review")
        return value


class EvaluationSummaryOut(serializers.Serializer):
    id = serializers.CharField()
    rule_set = serializers.CharField()
    verdict = serializers.CharField()
    recommended_action = serializers.CharField()
    confidence = serializers.FloatField()
    language = serializers.CharField()
    input_chars = serializers.IntegerField()
    metadata = serializers.JSONField(allow_null=True)
    created_at = serializers.DateTimeField()


class EvaluationDetailOut(EvaluationSummaryOut):
    input = serializers.CharField(allow_null=True, help_text="Null when the organization does not store inputs.")
    context = serializers.JSONField(allow_null=True)
    rules = RuleResultOut(many=True)
    latency_ms = serializers.FloatField()

    def to_representation(self, instance):
        data = super().to_representation(instance)
        if not instance.input_stored:
            data["input"] = None
        return data


class EvaluationListOut(serializers.Serializer):
    evaluations = EvaluationSummaryOut(many=True)
    next_cursor = serializers.CharField(allow_null=True)


class EvaluationDeleteManyIn(serializers.Serializer):
    confirm = serializers.CharField(help_text="Must be 'delete'.")
    before = serializers.DateTimeField(required=False, help_text="Only evaluations created before this time.")

    def validate_confirm(self, value):
        if value != "delete":
            raise serializers.ValidationError("must be 'delete' to confirm")
        return value


class EvaluationDeleteManyOut(serializers.Serializer):
    deleted = serializers.IntegerField()
    before = serializers.CharField(allow_null=True)


class EvaluationDeletedOut(serializers.Serializer):
    id = serializers.CharField()
    deleted = serializers.BooleanField()


class LanguageOut(serializers.Serializer):
    code = serializers.CharField()
    name = serializers.CharField()
    native_name = serializers.CharField()
    checks = serializers.IntegerField()
    matched_expected = serializers.IntegerField()


class LanguagesOut(serializers.Serializer):
    input_languages = serializers.CharField(help_text="'any': every language is accepted.")
    response_language = serializers.CharField()
    tested = LanguageOut(many=True)
    test = serializers.JSONField(help_text="The corpus, its split, the date and the engine version of the figures.")


class FeedbackIn(serializers.Serializer):
    message = serializers.CharField(max_length=2000)
    about = serializers.CharField(required=False, max_length=300, default="", allow_blank=True)
    evaluation_id = serializers.CharField(required=False, max_length=64, default="", allow_blank=True)
    request_id = serializers.CharField(required=False, max_length=64, default="", allow_blank=True)
    contact = serializers.CharField(required=False, max_length=200, default="", allow_blank=True)


class FeedbackOut(serializers.Serializer):
    received = serializers.BooleanField()
    id = serializers.CharField()


class FeedbackInfoOut(serializers.Serializer):
    route = serializers.CharField()
    method = serializers.CharField()
    description = serializers.CharField()
    limits = serializers.JSONField()
