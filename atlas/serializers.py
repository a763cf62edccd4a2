"""Shapes of the Atlas routes."""

from rest_framework import serializers

from atlas import constants


class LookupIn(serializers.Serializer):
    user_agent = serializers.CharField(max_length=constants.LOOKUP_MAX_CHARS, allow_blank=False, trim_whitespace=False,
                                       help_text="The User-Agent string, at most 2,000 characters.")


class VerifyIn(serializers.Serializer):
    user_agent = serializers.CharField(max_length=constants.LOOKUP_MAX_CHARS, trim_whitespace=False)
    ip = serializers.CharField(max_length=64, required=False, allow_blank=True,
                               help_text="The client address the request came from (IPv4 or IPv6).")
    method = serializers.RegexField(r"^[A-Za-z]{1,16}$", required=False, default="GET", help_text="The request's method.")
    url = serializers.URLField(max_length=2000, required=False, allow_blank=True,
                               help_text="The request's full target URI (scheme, authority, path and query).")
    headers = serializers.DictField(child=serializers.CharField(max_length=8192, allow_blank=True), required=False,
                                    help_text="The request's headers (at least Signature, Signature-Input and "
                                              "Signature-Agent, and any other header the signature covers).")

    def validate_headers(self, value):
        if len(value) > 50:
            raise serializers.ValidationError("At most 50 headers.")
        return value


class VerificationOut(serializers.Serializer):
    method = serializers.CharField(help_text="web_bot_auth, ip_ranges, user_agent_only or unattributable.")
    label = serializers.CharField()
    verifiable = serializers.BooleanField()
    how = serializers.CharField()
    ip_lists = serializers.ListField(child=serializers.DictField())
    rdns_suffixes = serializers.ListField(child=serializers.CharField())
    key_directory = serializers.CharField(allow_null=True)


class AgentOut(serializers.Serializer):
    slug = serializers.CharField()
    agent = serializers.CharField(help_text="The agent's name.")
    operator = serializers.CharField(allow_null=True)
    operator_url = serializers.CharField(allow_null=True)
    category = serializers.CharField(help_text="The purpose class, as a label.")
    purpose = serializers.ChoiceField(choices=list(constants.PURPOSES))
    kind = serializers.ChoiceField(choices=list(constants.KINDS))
    user_agents = serializers.CharField()
    user_agent_tokens = serializers.ListField(child=serializers.CharField())
    robots_txt_token = serializers.CharField(allow_null=True)
    web_bot_auth_key_directory = serializers.CharField(allow_null=True)
    verification = serializers.ChoiceField(choices=list(constants.VERIFICATION))
    verification_label = serializers.CharField()
    follows_robots_txt = serializers.BooleanField(allow_null=True)
    respects_robots_txt = serializers.BooleanField(allow_null=True)
    description = serializers.CharField()
    docs_url = serializers.CharField(allow_null=True)
    sources = serializers.ListField(child=serializers.DictField())
    self_registered = serializers.BooleanField()
    updated_at = serializers.CharField(allow_null=True)


class GenericClientOut(serializers.Serializer):
    name = serializers.CharField()
    kind = serializers.CharField()
    token = serializers.CharField()


class LookupOut(serializers.Serializer):
    user_agent = serializers.CharField()
    claim = serializers.ChoiceField(choices=["agent", "control_token", "generic_client", "none"])
    matched_token = serializers.CharField(allow_null=True)
    agent = AgentOut(allow_null=True)
    operator = serializers.CharField(allow_null=True)
    purpose = serializers.CharField(allow_null=True)
    category = serializers.CharField(allow_null=True)
    generic_client = GenericClientOut(allow_null=True)
    verification = VerificationOut(allow_null=True)
    verified = serializers.BooleanField(allow_null=True, help_text="Always null here: a string alone verifies nothing.")
    data_version = serializers.CharField()


class VerifyOut(LookupOut):
    verified = serializers.BooleanField()
    verdict = serializers.CharField(help_text="How the claim stands: web_bot_auth or ip_ranges (verified), user_agent_only "
                                              "or unattributable.")
    verdict_label = serializers.CharField()
    checks = serializers.DictField(help_text="web_bot_auth, ip_ranges and reverse_dns: what each check found, or null.")


class AgentsQueryIn(serializers.Serializer):
    q = serializers.CharField(required=False, allow_blank=True, max_length=200)
    purpose = serializers.CharField(required=False, allow_blank=True, max_length=60)
    operator = serializers.CharField(required=False, allow_blank=True, max_length=200)
    verification = serializers.ChoiceField(choices=list(constants.VERIFICATION), required=False)
    limit = serializers.IntegerField(required=False, default=constants.AGENTS_LIMIT_DEFAULT, min_value=1,
                                     max_value=constants.AGENTS_LIMIT_MAX)
    offset = serializers.IntegerField(required=False, default=0, min_value=0, max_value=1_000_000)


class AgentListOut(serializers.Serializer):
    agents = AgentOut(many=True)
    total = serializers.IntegerField()
    limit = serializers.IntegerField()
    offset = serializers.IntegerField()


class AgentQueryIn(serializers.Serializer):
    fields = serializers.ChoiceField(choices=["public", "full"], required=False,
                                     help_text="public for everyone; full needs Atlas Pro or Team (the default there).")
    osint = serializers.BooleanField(required=False, default=True, help_text="Include operator findings.")


class AgentDetailOut(serializers.Serializer):
    fields = serializers.ChoiceField(choices=["public", "full"])
    agent = serializers.DictField()
    osint = serializers.ListField(child=serializers.DictField())


class RegistrationIn(serializers.Serializer):
    name = serializers.CharField(max_length=constants.NAME_MAX)
    operator = serializers.CharField(max_length=constants.OPERATOR_MAX)
    domain = serializers.CharField(max_length=253)
    tokens = serializers.ListField(
        child=serializers.CharField(min_length=constants.TOKEN_MIN_CHARS, max_length=constants.TOKEN_MAX_CHARS),
        min_length=constants.TOKENS_MIN, max_length=constants.TOKENS_MAX,
    )
    purpose = serializers.ChoiceField(choices=list(constants.PURPOSES), required=False, default="other")
    user_agent = serializers.CharField(max_length=constants.USER_AGENT_MAX, required=False, allow_blank=True)
    description = serializers.CharField(max_length=constants.DESCRIPTION_MAX, required=False, allow_blank=True)
    policy_url = serializers.URLField(max_length=500, required=False, allow_blank=True)
    key_directory_url = serializers.URLField(max_length=500, required=False, allow_blank=True)
    follows_robots_txt = serializers.BooleanField(required=False, allow_null=True, default=None)


class ProofDnsOut(serializers.Serializer):
    type = serializers.CharField()
    name = serializers.CharField()
    value = serializers.CharField()


class ProofHttpOut(serializers.Serializer):
    url = serializers.CharField()
    body = serializers.CharField()


class ProofOut(serializers.Serializer):
    value = serializers.CharField()
    dns = ProofDnsOut()
    http = ProofHttpOut()


class RegistrationOut(serializers.Serializer):
    id = serializers.RegexField(r"^areg_[A-Za-z0-9_-]{16}$")
    status = serializers.ChoiceField(choices=["pending_verification", "pending_review", "published", "rejected", "withdrawn"])
    name = serializers.CharField()
    operator = serializers.CharField()
    domain = serializers.CharField()
    tokens = serializers.ListField(child=serializers.CharField())
    purpose = serializers.CharField()
    user_agent = serializers.CharField(allow_null=True)
    description = serializers.CharField(allow_null=True)
    policy_url = serializers.CharField(allow_null=True)
    key_directory_url = serializers.CharField(allow_null=True)
    key_directory_ok = serializers.BooleanField(help_text="The key directory answered with a valid JWKS at verification.")
    follows_robots_txt = serializers.BooleanField(allow_null=True)
    note = serializers.CharField(allow_null=True)
    created_at = serializers.CharField()
    verified_at = serializers.CharField(allow_null=True)
    verification = ProofOut(required=False, help_text="Present while unverified.")
    agent = AgentOut(required=False, allow_null=True, help_text="Present once published: the registry entry.")


class RegistrationListOut(serializers.Serializer):
    registrations = RegistrationOut(many=True)


class SightingsQueryIn(serializers.Serializer):
    days = serializers.IntegerField(required=False, default=7, min_value=1, max_value=3650)
    agent = serializers.SlugField(required=False, max_length=80)
    format = serializers.ChoiceField(choices=["json", "csv"], required=False, default="json")


class DatasetQueryIn(serializers.Serializer):
    format = serializers.ChoiceField(choices=["json", "csv", "md"], required=False)


class ReportQueryIn(serializers.Serializer):
    section = serializers.ChoiceField(choices=["summary", "full"], required=False,
                                      help_text="summary is free; the full report needs Atlas Pro or Team.")


class AtlasCheckoutIn(serializers.Serializer):
    plan = serializers.CharField(max_length=20, help_text="The Atlas tier to buy: `pro` or `team`.")
    success_url = serializers.URLField(required=False, max_length=2000, help_text="Where the payer lands after paying.")
    cancel_url = serializers.URLField(required=False, max_length=2000, help_text="Where the payer lands after leaving.")

    def validate_plan(self, value: str) -> str:
        if value not in ("pro", "team"):
            raise serializers.ValidationError(f"must be pro or team, not {value!r}.")
        return value


class AtlasCheckoutOut(serializers.Serializer):
    url = serializers.URLField(help_text="The Stripe Checkout page to send the payer to.")
    plan = serializers.CharField()
    expires_in_seconds = serializers.IntegerField()


class AtlasSwitchOut(serializers.Serializer):
    plan = serializers.CharField(help_text="The tier the subscription is now on.")
    switched = serializers.BooleanField(help_text="true: the live subscription was switched in place, prorated.")
    status = serializers.CharField(allow_null=True)


class AtlasCancelOut(serializers.Serializer):
    plan = serializers.CharField()
    cancels_at = serializers.DateTimeField(allow_null=True, help_text="When the tier ends (the end of the current period).")
    subscription_status = serializers.CharField()


class AtlasSubscriptionOut(serializers.Serializer):
    tier = serializers.CharField(help_text="free, pro or team.")
    limits = serializers.JSONField(help_text="daily_lookup_limit, full_registry, downloads, internal_redistribution.")
    lookups_today = serializers.JSONField(help_text="used, limit and remaining lookups this UTC day.")
    subscription = serializers.JSONField(allow_null=True, help_text="The Stripe subscription behind the tier, or null.")
    billing_enabled = serializers.BooleanField()
